"""tf.data input pipeline: whole sessions in batches of one number of queries S.

The only module of `mtn_keras.data` that imports TensorFlow. Batches follow
docs/contracts.md: x = {session_tokens (B,S,n), session_ext (B,S,n), decoder_input
(B,S-1,n+1)}, y = target (B,S-1,n+1), all int32; with the lines' histories, x also holds
history_tokens (B,H,n).
"""

import os
from typing import Sequence

import numpy as np
import tensorflow as tf

from mtn_keras.data.encode import encode_buckets
from mtn_keras.data.history import LineHistories
from mtn_keras.data.prepared import load_split, read_sessions
from mtn_keras.data.vocab import Vocabulary

__all__ = ["load_split", "make_dataset"]


def make_dataset(
    sessions_or_path: Sequence[Sequence[str]] | str | os.PathLike,
    vocab: Vocabulary,
    max_tokens: int,
    batch_size: int,
    shuffle: bool = False,
    seed: int = 0,
    history: LineHistories | None = None,
) -> tf.data.Dataset:
    """Batches `(x, y)` of the sessions (a list of query lists, or a split's .tsv file).

    Each batch holds sessions of one length S (sessions of < 2 queries are left out). Without
    shuffle: buckets in increasing S, sessions in input order. With shuffle: sessions within
    a bucket and the order of batches are shuffled anew each epoch, the same under a seed.
    With `history` (the lines' histories), each session also gets `history_tokens` (H, n):
    its user's last H queries before it, oldest first, front-padded, gathered per batch
    from the one encoded matrix.
    """
    if isinstance(sessions_or_path, (str, os.PathLike)):
        sessions_or_path = read_sessions(sessions_or_path)
    buckets = encode_buckets(sessions_or_path, vocab, max_tokens)
    if not buckets:
        raise ValueError("no session of 2 or more queries to make batches of")
    datasets, batch_counts = [], []
    for s, arrays in buckets.items():
        x = {key: arrays[key] for key in ("session_tokens", "session_ext", "decoder_input")}
        if history is not None:
            x["history_bounds"] = history.bounds[arrays["line"]]
        dataset = tf.data.Dataset.from_tensor_slices((x, arrays["target"]))
        if shuffle:
            dataset = dataset.shuffle(
                len(arrays["target"]), seed=seed + s, reshuffle_each_iteration=True
            )
        datasets.append(dataset.batch(batch_size))
        batch_counts.append(-(-len(arrays["target"]) // batch_size))
    if shuffle:
        choices = np.repeat(np.arange(len(datasets), dtype=np.int64), batch_counts)
        order = tf.data.Dataset.from_tensor_slices(choices).shuffle(
            len(choices), seed=seed, reshuffle_each_iteration=True
        )
        dataset = tf.data.Dataset.choose_from_datasets(datasets, order)
    else:
        dataset = datasets[0]
        for other in datasets[1:]:
            dataset = dataset.concatenate(other)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(sum(batch_counts)))
    if history is not None:
        dataset = dataset.map(history_gather(history), num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def history_gather(history: LineHistories):
    """A map over batches replacing `history_bounds` (B, 2) with `history_tokens` (B, H, n):
    rows hi-H .. hi-1 of the matrix, those before lo (another user's, or none) zeroed."""
    # A zero row after the last, so that a matrix with no rows gathers too.
    tokens = tf.constant(np.pad(history.tokens, [(0, 1), (0, 0)]))
    slots = tf.range(history.size, dtype=tf.int64)[None, :] - history.size

    def gather(x, y):
        x = dict(x)
        bounds = x.pop("history_bounds")
        rows = bounds[:, 1:] + slots  # (B, H)
        real = rows >= bounds[:, :1]
        picked = tf.gather(tokens, tf.maximum(rows, 0))
        x["history_tokens"] = picked * tf.cast(real, tf.int32)[..., None]
        return x, y

    return gather
