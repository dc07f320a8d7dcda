"""tf.data batches: contract shapes, one number of queries per batch, determinism under a seed."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.data.pipeline import make_dataset  # noqa: E402
from mtn_keras.data.vocab import SPECIALS, Vocabulary  # noqa: E402

WORDS = ["red", "blue", "green", "cheap", "bikes", "kites", "tents"]
VOCAB = Vocabulary(list(SPECIALS) + WORDS[:5])


def make_sessions(count=40):
    """Made-up sessions of 1 to 5 queries of 1 to 4 words."""
    rng = np.random.default_rng(0)
    return [
        [" ".join(rng.choice(WORDS, rng.integers(1, 5))) for _ in range(1 + i % 5)]
        for i in range(count)
    ]


def batches(dataset):
    return [({k: v.numpy() for k, v in x.items()}, y.numpy()) for x, y in dataset]


def test_data_batches_follow_the_contract():
    sessions = make_sessions()
    dataset = make_dataset(sessions, VOCAB, max_tokens=3, batch_size=4)
    seen = 0
    for x, y in batches(dataset):
        b, s, n = x["session_tokens"].shape
        assert n == 3 and b <= 4 and s >= 2
        assert x["session_ext"].shape == (b, s, 3)
        assert x["decoder_input"].shape == y.shape == (b, s - 1, 4)
        assert all(v.dtype == np.int32 for v in (*x.values(), y))
        seen += b
    assert seen == sum(len(session) >= 2 for session in sessions)
    assert dataset.cardinality().numpy() == len(batches(dataset))


def test_data_batches_without_shuffle_keep_input_order_per_bucket():
    sessions = [["red", "blue"], ["cheap bikes", "red", "kites"], ["green", "tents"]]
    first, second = batches(make_dataset(sessions, VOCAB, 2, batch_size=8))
    np.testing.assert_array_equal(first[0]["session_tokens"][:, 0, 0], [4, 6])  # red, green
    assert second[0]["session_tokens"].shape == (1, 3, 2)


def test_data_shuffled_batches_are_deterministic_under_a_seed(tmp_path):
    sessions = make_sessions(60)
    path = tmp_path / "train.tsv"
    path.write_text("".join("\t".join(session) + "\n" for session in sessions))

    def epochs(dataset):
        return [[y.tobytes() for _, y in batches(dataset)] for _ in range(2)]

    one = epochs(make_dataset(str(path), VOCAB, 3, batch_size=4, shuffle=True, seed=7))
    assert one == epochs(make_dataset(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=7))
    assert one[0] != one[1]  # reshuffled each epoch
    assert one != epochs(make_dataset(sessions, VOCAB, 3, batch_size=4, shuffle=True, seed=8))
