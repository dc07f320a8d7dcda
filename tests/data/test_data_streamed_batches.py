"""Streamed batches: a split file encoded once into .npy files beside it and memory-mapped
gives the very batches of the in-memory SessionBatches, in the same order for a seed and an
epoch, histories included; the folder is reused, made anew for a changed input, and a
damaged file is named."""

import json
import os

import numpy as np
import pytest
from test_data_batches import VOCAB, make_sessions
from test_data_prepare import prepare_windows

from mtn_keras.data import streamed_buckets
from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.history import split_histories
from mtn_keras.data.streamed_buckets import StreamedBatchesError, cache_folder
from mtn_keras.data.vocab import Vocabulary


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 7 sessions: the file is encoded in many, and buckets span their borders."""
    monkeypatch.setattr(streamed_buckets, "CHUNK", 7)


@pytest.fixture
def split(tmp_path):
    """A split file of made-up sessions of 1 to 5 queries, with a blank line among them."""
    lines = ["\t".join(session) for session in make_sessions(90)]
    path = tmp_path / "train.tsv"
    path.write_text("\n".join(lines[:40] + [" "] + lines[40:]) + "\n")
    return path


def assert_same_epochs(memory, streamed, epochs=(0, 1, 2)):
    assert len(memory) == len(streamed) and memory.sessions == streamed.sessions
    for epoch in epochs:
        memory.epoch = streamed.epoch = epoch
        for (x, y), (x_streamed, y_streamed) in zip(memory, streamed):
            assert type(y_streamed) is np.ndarray and y_streamed.dtype == y.dtype
            np.testing.assert_array_equal(y, y_streamed)
            assert set(x) == set(x_streamed)
            for key in x:
                assert type(x_streamed[key]) is np.ndarray and x_streamed[key].dtype == x[key].dtype
                np.testing.assert_array_equal(x[key], x_streamed[key])


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("limit", [None, 5])
def test_streamed_batches_are_the_in_memory_ones(split, small_chunks, shuffle, limit):
    options = dict(shuffle=shuffle, seed=11, limit=limit)
    memory = SessionBatches(str(split), VOCAB, 3, 4, **options)
    streamed = SessionBatches(str(split), VOCAB, 3, 4, stream=True, **options)
    assert memory.sessions == 90
    assert_same_epochs(memory, streamed)


def test_streamed_batches_with_histories_are_the_in_memory_ones(tmp_path, small_chunks):
    data = prepare_windows(tmp_path, users=12, held_out=3, min_count=1)
    vocab = Vocabulary.load(str(data / "vocab.txt"))
    history = split_histories(str(data), ("train",), vocab, 3, 4)["train"]
    options = dict(shuffle=True, seed=2, history=history)
    memory = SessionBatches(str(data / "train.tsv"), vocab, 3, 8, **options)
    streamed = SessionBatches(str(data / "train.tsv"), vocab, 3, 8, stream=True, **options)
    assert_same_epochs(memory, streamed, epochs=(0, 1))
    x, _ = streamed[0]
    assert "history_tokens" in x


def test_the_folder_is_built_once_and_anew_for_another_split_vocabulary_or_width(split):
    SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    folder = cache_folder(split, VOCAB, 3)
    assert os.path.isfile(os.path.join(folder, "meta.json"))
    written = {name: os.stat(os.path.join(folder, name)).st_mtime_ns for name in os.listdir(folder)}
    SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    assert {name: os.stat(os.path.join(folder, name)).st_mtime_ns for name in written} == written

    wider = cache_folder(split, VOCAB, 4)
    other_vocab = Vocabulary(VOCAB.tokens + ["tents"])
    assert len({folder, wider, cache_folder(split, other_vocab, 3)}) == 3
    with open(split, "a") as handle:
        handle.write("red\tblue tents\n")
    changed = SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    assert cache_folder(split, VOCAB, 3) != folder
    assert changed.sessions == 91
    assert_same_epochs(SessionBatches(str(split), VOCAB, 3, 4), changed, epochs=(0,))


def test_a_damaged_file_is_named(split):
    SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    folder = cache_folder(split, VOCAB, 3)
    shard = os.path.join(folder, "s3-target.npy")
    with open(shard, "r+b") as handle:
        handle.truncate(os.path.getsize(shard) - 8)
    with pytest.raises(StreamedBatchesError, match=f"{shard}: damaged .*delete {folder}"):
        SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    os.remove(shard)
    with pytest.raises(StreamedBatchesError, match=f"{shard}: damaged"):
        SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    meta = os.path.join(folder, "meta.json")
    with open(meta, "w") as handle:
        json.dump({"buckets": 3}, handle)
    with pytest.raises(StreamedBatchesError, match=f"{meta}: damaged"):
        SessionBatches(str(split), VOCAB, 3, 4, stream=True)


def test_a_line_that_is_not_utf8_is_named_and_no_folder_is_left(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_bytes(b"red\tblue\ncheap bikes\tkites\nred \xff\tblue\n")
    with pytest.raises(ValueError, match=f"{path}:3: not UTF-8"):
        SessionBatches(str(path), VOCAB, 3, 4, stream=True)
    assert [name for name in os.listdir(tmp_path / "streamed") if not name.endswith(".lock")] == []


def test_a_split_that_changes_while_its_batches_are_written_is_refused(split, monkeypatch):
    read = streamed_buckets.iter_sessions
    passes = []

    def growing(path):
        passes.append(path)
        yield from read(path)
        if len(passes) == 2:  # the second pass, the encoding one, finds one more session
            yield ["red", "blue", "kites"]

    monkeypatch.setattr(streamed_buckets, "iter_sessions", growing)
    with pytest.raises(ValueError, match=f"{split} changed while its batches were written"):
        SessionBatches(str(split), VOCAB, 3, 4, stream=True)
    assert not os.path.exists(cache_folder(split, VOCAB, 3))


def test_stream_reads_a_split_file_not_sessions():
    with pytest.raises(ValueError, match="give its path"):
        SessionBatches(make_sessions(), VOCAB, 3, 4, stream=True)
