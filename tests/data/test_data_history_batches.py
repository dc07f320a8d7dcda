"""History batches: each session's history_tokens are its own user's queries from before
it, the last H of them, oldest first, front-padded; one encoded matrix for all lines."""

import numpy as np
import pytest
from test_data_prepare import prepare_windows

from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.history import load_history, load_starts, split_histories
from mtn_keras.data.prepared import load_split, load_users
from mtn_keras.data.vocab import Vocabulary

H, N = 4, 3


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("history")
    return str(prepare_windows(folder, users=12, held_out=3, min_count=1))


def decoded(vocab, rows):
    """Token id rows back to queries, padding rows left out."""
    return [" ".join(vocab.tokens[i] for i in row if i) for row in rows if row.any()]


def test_a_sessions_history_is_its_users_queries_before_it(prepared):
    vocab = Vocabulary.load(f"{prepared}/vocab.txt")
    histories = load_history(prepared)
    found = split_histories(prepared, ("train", "test"), vocab, N, H)
    assert found["train"].tokens is found["test"].tokens  # one matrix for every split
    lines, users = load_split(prepared, "test"), load_users(prepared, "test")
    starts = load_starts(prepared, "test")
    dataset = SessionBatches(lines, vocab, N, batch_size=64, history=found["test"])
    long_lines = [i for i, line in enumerate(lines) if len(line) >= 2]
    seen, empty = 0, 0
    for x, _ in dataset:
        history = x["history_tokens"]
        size = x["session_tokens"].shape[1]
        assert history.shape[1:] == (H, N)
        for row, line in enumerate(i for i in long_lines if len(lines[i]) == size):
            expected = histories[users[line]][max(0, starts[line] - H) : starts[line]]
            assert decoded(vocab, history[row]) == expected
            real = history[row].any(axis=-1)
            assert not real[: H - len(expected)].any() and real[H - len(expected) :].all()
            empty += not expected
            seen += 1
    assert seen == len(long_lines) and 0 < empty < seen


def test_without_history_the_batches_are_as_before(prepared):
    vocab = Vocabulary.load(f"{prepared}/vocab.txt")
    lines = load_split(prepared, "train")
    history = split_histories(prepared, ("train",), vocab, N, H)["train"]
    plain = SessionBatches(lines, vocab, N, 8, shuffle=True, seed=1)
    read = SessionBatches(lines, vocab, N, 8, shuffle=True, seed=1, history=history)
    for (x, y), (x_read, y_read) in zip(plain, read):
        assert set(x_read) - set(x) == {"history_tokens"}
        np.testing.assert_array_equal(y, y_read)
        for key in x:
            np.testing.assert_array_equal(x[key], x_read[key])
