"""The history reader (MTN's third level): attention over real history entries only, and
an empty history that changes nothing."""

import numpy as np

from mtn_keras.layers.history_reader import HistoryReader, last_query_weights


def read(history_mask, seed=0):
    rng = np.random.default_rng(seed)
    b, s, d = len(history_mask), 3, 8
    vectors = rng.normal(size=(b, s, d)).astype("float32")
    history = rng.normal(size=(b, len(history_mask[0]), d)).astype("float32")
    reader = HistoryReader(d, num_heads=2)
    out, scores = reader(vectors, history, np.array(history_mask))
    return vectors, np.asarray(out), np.asarray(scores)


def test_attention_sums_to_one_over_real_entries_and_is_zero_on_padding():
    mask = [[False, False, True, True, True], [True, True, True, True, True]]
    _, out, scores = read(mask)
    assert scores.shape == (2, 2, 3, 5)
    np.testing.assert_allclose(scores.sum(-1), 1.0, rtol=1e-5)
    assert np.all(scores[0, :, :, :2] == 0) and np.all(scores[0, :, :, 2:] > 0)
    weights = np.asarray(last_query_weights(scores))
    assert weights.shape == (2, 5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert np.all(weights[0, :2] == 0)


def test_an_empty_history_leaves_the_vectors_unchanged_without_nan():
    vectors, out, scores = read([[False] * 4, [True, False, False, False]])
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(scores))
    np.testing.assert_array_equal(out[0], vectors[0])
    assert np.all(scores[0] == 0) and not np.allclose(out[1], vectors[1])
    np.testing.assert_allclose(scores[1, :, :, 0], 1.0, rtol=1e-5)
