"""Numpy batches: contract shapes, one number of queries per batch, an epoch's order fixed
by the seed and the epoch's number."""

import numpy as np

from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.vocab import SPECIALS, Vocabulary

WORDS = ["red", "blue", "green", "cheap", "bikes", "kites", "tents"]
VOCAB = Vocabulary(list(SPECIALS) + WORDS[:5])


def make_sessions(count=40):
    """Made-up sessions of 1 to 5 queries of 1 to 4 words."""
    rng = np.random.default_rng(0)
    return [
        [" ".join(rng.choice(WORDS, rng.integers(1, 5))) for _ in range(1 + i % 5)]
        for i in range(count)
    ]


def test_data_batches_follow_the_contract():
    sessions = make_sessions()
    batches = SessionBatches(sessions, VOCAB, max_tokens=3, batch_size=4)
    seen = 0
    for x, y in batches:
        b, s, n = x["session_tokens"].shape
        assert n == 3 and b <= 4 and s >= 2
        assert x["session_ext"].shape == (b, s, 3)
        assert x["decoder_input"].shape == y.shape == (b, s - 1, 4)
        assert all(v.dtype == np.int32 for v in (*x.values(), y))
        seen += b
    assert seen == sum(len(session) >= 2 for session in sessions)
    assert len(batches) == len(list(batches))


def test_data_batches_without_shuffle_keep_input_order_per_bucket():
    sessions = [["red", "blue"], ["cheap bikes", "red", "kites"], ["green", "tents"]]
    first, second = SessionBatches(sessions, VOCAB, 2, batch_size=8)
    np.testing.assert_array_equal(first[0]["session_tokens"][:, 0, 0], [4, 6])  # red, green
    assert second[0]["session_tokens"].shape == (1, 3, 2)


def test_an_epochs_order_follows_from_the_seed_and_its_number(tmp_path):
    sessions = make_sessions(60)
    path = tmp_path / "train.tsv"
    path.write_text("".join("\t".join(session) + "\n" for session in sessions))

    def epochs(batches, first=0):
        orders = []
        for epoch in (first, first + 1):
            batches.epoch = epoch
            orders.append([y.tobytes() for _, y in batches])
        return orders

    one = epochs(SessionBatches(str(path), VOCAB, 3, batch_size=4, shuffle=True, seed=7))
    assert one == epochs(SessionBatches(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=7))
    assert one[0] != one[1]  # reshuffled each epoch
    assert one != epochs(SessionBatches(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=8))
    resumed = epochs(SessionBatches(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=7), 1)
    assert resumed[0] == one[1]  # a run resumed at epoch 1 sees epoch 1's order


def test_a_shuffled_epoch_holds_every_session_once_and_a_limit_keeps_its_first_batches():
    sessions = [[f"red {i}", "blue"] for i in range(10)] + [["red", "blue", "green"]] * 5
    plain = SessionBatches(sessions, VOCAB, 3, batch_size=4)
    shuffled = SessionBatches(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=3)
    assert len(shuffled) == len(plain) == 5
    rows = sorted(row.tobytes() for x, _ in shuffled for row in x["session_ext"])
    assert rows == sorted(row.tobytes() for x, _ in plain for row in x["session_ext"])
    limited = SessionBatches(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=3, limit=2)
    assert len(limited) == 2
    assert [y.tobytes() for _, y in limited] == [y.tobytes() for _, y in shuffled][:2]


def test_iterating_gives_the_current_epochs_batches_as_indexing_does():
    batches = SessionBatches(make_sessions(), VOCAB, 4, batch_size=3, shuffle=True, seed=1)
    for epoch in (0, 1):
        batches.epoch = epoch
        looped = [y.tobytes() for _, y in batches]
        assert looped == [batches[i][1].tobytes() for i in range(len(batches))]
    batches.epoch = 0
    assert [y.tobytes() for _, y in batches] != looped
