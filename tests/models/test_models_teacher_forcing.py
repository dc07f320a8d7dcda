"""Whole candidates scored at once (`teacher_forced_hidden`, then ranking/scoring.py) get what
`step` gives them word by word, for every model, with and without the copy head."""

import numpy as np
import pytest
from keras import ops
from tiny_models import N, V, shared

from mtn_keras.data.vocab import BOS, EOS, UNK

# Two candidates per session: the copied word V + 0 then a vocabulary word; four words; an
# empty slot.
CANDIDATES = np.array([[[V, 9, 0, 0], [7, 8, 11, 12], [0, 0, 0, 0]]] * 2, "int32")


def session(batch=2, size=3, seed=0):
    """Sessions of real random words; the out-of-vocabulary word V + 0 opens query 0."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(4, V, (batch, size, N)).astype("int32")
    tokens[:, 0, 0] = UNK
    ext = tokens.copy()
    ext[:, 0, 0] = V
    return tokens, ext


def step_by_step(model, tokens, ext, candidate):
    """A candidate's log-probability (words and eos) and the copy weights summed over its
    words, by `step`."""
    state = model.start(tokens, ext)
    total = np.zeros(len(tokens))
    for t, (token, target) in enumerate(zip([BOS, *candidate], [*candidate, EOS])):
        if target == EOS:
            copied = ops.convert_to_numpy(state["copied"])
        log_probs, state = model.step(np.full(len(tokens), token, "int32"), state, t)
        total += ops.convert_to_numpy(log_probs)[:, target]
    return total, copied


@pytest.mark.parametrize(
    "name, copy",
    [
        ("mtn", True),
        pytest.param("mtn", False, marks=pytest.mark.slow),
        ("transformer", True),
        ("hred", True),
        pytest.param("mnsrf", True, marks=pytest.mark.slow),
        ("seq2seq", True),
    ],
)
def test_candidates_scored_at_once_equal_the_steps(name, copy):
    import tensorflow as tf

    from mtn_keras.ranking.scoring import candidate_hidden, candidate_log_probs

    model = shared(name, copy)
    tokens, ext = session()
    state = model.start(tokens, ext)
    ids = tf.constant(CANDIDATES)
    scored = candidate_log_probs(model, state, ids, candidate_hidden(model, state, ids))
    for c in range(2):
        words = [w for w in CANDIDATES[0, c] if w]
        expected, copied = step_by_step(model, tokens, ext, words)
        np.testing.assert_allclose(
            scored["log_probs"].numpy()[:, c], expected, rtol=1e-4, atol=1e-4
        )
        np.testing.assert_allclose(scored["copied"].numpy()[:, c], copied, atol=1e-5)
    assert np.isfinite(scored["log_probs"].numpy()[:, 0]).all() == copy  # only a copy gives V + 0
    assert np.isneginf(scored["log_probs"].numpy()[:, 2]).all()  # an empty slot is no candidate
    assert scored["lengths"].numpy().tolist() == [[2, 4, 0]] * 2
