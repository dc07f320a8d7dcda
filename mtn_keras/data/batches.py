"""Training batches in numpy: whole sessions in batches of one number of queries S, in an
order fixed by a seed and the epoch's number, the same under every Keras backend.

Batches follow docs/contracts.md: x = {session_tokens (B,S,n), session_ext (B,S,n),
decoder_input (B,S-1,n+1)}, y = target (B,S-1,n+1), all int32; with the lines' histories,
x also holds history_tokens (B,H,n). No TensorFlow: `train` runs on it under JAX.
"""

import os
from collections.abc import Iterator
from typing import Sequence, TypeAlias

import numpy as np

from mtn_keras.data.encode import encode_buckets
from mtn_keras.data.history import LineHistories
from mtn_keras.data.prepared import read_sessions
from mtn_keras.data.streamed_buckets import streamed_buckets
from mtn_keras.data.vocab import Vocabulary

INPUTS = ("session_tokens", "session_ext", "decoder_input")

# A batch: its inputs by name and its targets.
Batch: TypeAlias = tuple[dict[str, np.ndarray], np.ndarray]


class SessionBatches:
    """The batches `(x, y)` of the sessions (a list of query lists, or a split's .tsv file).

    Each batch holds sessions of one length S (sessions of < 2 queries are left out).
    Without shuffle: buckets in increasing S, sessions in input order. With shuffle: the
    sessions within each bucket and then the order of all batches are permuted by a numpy
    generator seeded with (seed, epoch), so an epoch's order is known from its number alone
    (a resumed run sees the order an unbroken one would). `limit` keeps an epoch's first
    `limit` batches. With `history`, each session also gets `history_tokens` (H, n): its
    user's last H queries before it, oldest first, front-padded. With `stream` (a split
    file only), the arrays are memory-mapped from .npy files built once beside the file
    (streamed_buckets.py): the same batches, without the split or its arrays in memory.
    `sessions` counts the sessions read, those of one query too.
    """

    def __init__(
        self,
        sessions_or_path: Sequence[Sequence[str]] | str | os.PathLike,
        vocab: Vocabulary,
        max_tokens: int,
        batch_size: int,
        shuffle: bool = False,
        seed: int = 0,
        history: LineHistories | None = None,
        limit: int | None = None,
        stream: bool = False,
    ) -> None:
        if isinstance(sessions_or_path, (str, os.PathLike)) and stream:
            self.buckets, self.sessions = streamed_buckets(sessions_or_path, vocab, max_tokens)
        elif stream:
            raise ValueError("stream reads a split file: give its path, not its sessions")
        else:
            if isinstance(sessions_or_path, (str, os.PathLike)):
                sessions_or_path = read_sessions(sessions_or_path)
            self.buckets = list(encode_buckets(sessions_or_path, vocab, max_tokens).values())
            self.sessions = len(sessions_or_path)
        if not self.buckets:
            raise ValueError("no session of 2 or more queries to make batches of")
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.history, self.limit, self.epoch = history, limit, 0
        self._plan_epoch: int | None = None

    def __len__(self) -> int:
        total = sum(-(-len(bucket["target"]) // self.batch_size) for bucket in self.buckets)
        return min(total, self.limit) if self.limit else total

    def __getitem__(self, index: int) -> Batch:
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        bucket, rows = self.plan()[index]
        arrays = self.buckets[bucket]
        x = {key: arrays[key][rows] for key in INPUTS}
        if self.history is not None:
            x["history_tokens"] = history_tokens(self.history, arrays["line"][rows])
        return x, arrays["target"][rows]

    def __iter__(self) -> Iterator[Batch]:
        """This epoch's batches in order."""
        return (self[index] for index in range(len(self)))

    def plan(self) -> list[tuple[int, np.ndarray]]:
        """This epoch's batches as (bucket, row indices), computed once per epoch."""
        if self._plan_epoch != self.epoch:
            self._plan, self._plan_epoch = batch_plan(self), self.epoch
        return self._plan


def batch_plan(batches: SessionBatches) -> list[tuple[int, np.ndarray]]:
    """The (bucket, row indices) of every batch of `batches`' current epoch, in order."""
    rng = np.random.default_rng([batches.seed, batches.epoch]) if batches.shuffle else None
    plan = []
    for b, bucket in enumerate(batches.buckets):
        count = len(bucket["target"])
        rows = rng.permutation(count) if rng is not None else np.arange(count)
        plan += [(b, rows[i : i + batches.batch_size]) for i in range(0, count, batches.batch_size)]
    if rng is not None:
        plan = [plan[i] for i in rng.permutation(len(plan))]
    return plan


def history_tokens(history: LineHistories, lines: np.ndarray) -> np.ndarray:
    """(B, H, n): rows hi-H .. hi-1 of the history matrix for each line, those before lo
    (another user's, or none) zeroed."""
    bounds = history.bounds[lines]
    rows = bounds[:, 1:] + np.arange(-history.size, 0)[None, :]  # (B, H)
    real = rows >= bounds[:, :1]
    if not len(history.tokens):
        return np.zeros((*rows.shape, history.tokens.shape[1]), np.int32)
    picked = history.tokens[np.maximum(rows, 0)]
    return picked * real[..., None].astype(np.int32)
