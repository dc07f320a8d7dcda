"""The prepared dataset as `train` reads it: its vocabulary, stats and splits, checked, and
whether the training split's batches stream from disk (data/streamed_buckets.py) or are
built in memory; the validation split is always read into memory."""

import os
from typing import Any

from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.prepared import iter_sessions, load_split, load_stats
from mtn_keras.data.vocab import Vocabulary

# `--stream-input auto` streams a train.tsv of this many bytes or more (the dev log's is
# 2.7 MB; the whole AOL collection's, about a hundred times that).
STREAM_FROM_BYTES = 64 * 2**20
STREAM_CHOICES = ("auto", "yes", "no")


class PreparedInputError(ValueError):
    """The prepared dataset cannot be trained on; says what and where."""


def streams(directory: str, choice: str) -> bool:
    """Whether `train` streams the training split of `directory`: `choice` yes or no, or
    auto: yes when its train.tsv holds STREAM_FROM_BYTES or more."""
    path = os.path.join(directory, "train.tsv")
    if choice == "auto":  # a missing file is load_data's to report
        return os.path.isfile(path) and os.path.getsize(path) >= STREAM_FROM_BYTES
    return choice == "yes"


def load_data(
    directory: str, stream: bool = False
) -> tuple[Vocabulary, dict[str, Any], dict[str, list[list[str]] | str]]:
    """The prepared dataset's vocabulary, stats and train/valid sessions, checked; with
    `stream`, the training split is its file's path, read later (see `check_streamed`)."""
    for name in ("vocab.txt", "train.tsv", "valid.tsv", "stats.json"):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise PreparedInputError(f"{path} is missing; run `python -m mtn_keras.prepare` first")
    vocab = Vocabulary.load(os.path.join(directory, "vocab.txt"))
    stats = load_stats(directory)
    splits: dict[str, list[list[str]] | str] = {"valid": load_split(directory, "valid")}
    train_path = os.path.join(directory, "train.tsv")
    splits["train"] = train_path if stream else load_split(directory, "train")
    for name in ("valid",) if stream else ("train", "valid"):
        if not splits[name]:
            raise _no_session(directory, name)
    return vocab, stats, splits


def check_streamed(directory: str, vocab: Vocabulary, max_tokens: int) -> None:
    """Builds the streamed batches of the training split (once: a later run reuses them)
    and checks that they open; raises PreparedInputError for a split of no session."""
    path = os.path.join(directory, "train.tsv")
    if next(iter_sessions(path), None) is None:
        raise _no_session(directory, "train")
    SessionBatches(path, vocab, max_tokens, batch_size=1, stream=True)


def _no_session(directory: str, name: str) -> PreparedInputError:
    what = "train on" if name == "train" else "choose the best epoch by"
    return PreparedInputError(
        f"{os.path.join(directory, name + '.tsv')} holds no session: nothing to {what} "
        "(prepare again with a larger share in --split)"
    )
