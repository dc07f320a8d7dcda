"""MTN with `history_queries` (the third level): off changes nothing, an empty history is
no history, the decoding state's history attention, and saving with the option on."""

import keras
import numpy as np
import pytest

from mtn_keras.base.config import preset
from mtn_keras.models import build_model

V, N, H = 30, 4, 5


def tiny_mtn(history_queries, **changes):
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens = V, N
    config.history_queries = history_queries
    for key, value in changes.items():
        setattr(config, key, value)
    keras.utils.set_random_seed(3)
    model = build_model("mtn", config)
    model.build()
    return model


def inputs(history_rows=(2, 0, 5), seed=0):
    """Three sessions of 3 queries; row i's history holds its last history_rows[i] queries."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(4, V, (3, 3, N)).astype("int32")
    history = rng.integers(4, V, (3, H, N)).astype("int32")
    for row, real in enumerate(history_rows):
        history[row, : H - real] = 0
    x = {"session_tokens": tokens, "session_ext": tokens, "decoder_input": tokens[:, 1:]}
    return x, history


def same_weights(source, target):
    """Copy the weights of `source` but its history layers' into `target` (same order)."""
    weights = [v for v in source.weights if "history" not in v.path]
    assert [v.shape for v in weights] == [v.shape for v in target.weights]
    for variable, value in zip(target.weights, weights):
        variable.assign(value)


@pytest.fixture(scope="module")
def model():
    return tiny_mtn(H)


def test_history_queries_zero_adds_no_layer():
    plain = tiny_mtn(0)
    assert not [v.path for v in plain.weights if "history" in v.path]
    assert "history_queries" in plain.get_config()["config"]


def test_an_empty_history_gives_the_outputs_of_the_model_without_history(model):
    plain = tiny_mtn(0)
    same_weights(model, plain)
    x, history = inputs(history_rows=(0, 0, 0))
    expected = plain(x)
    for got in (model({**x, "history_tokens": history}), model(x)):
        for key in expected:
            np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=1e-6)
    x, history = inputs()
    changed = model({**x, "history_tokens": history})["hidden"]
    assert not np.allclose(changed[0], expected["hidden"][0])


def test_start_returns_history_attention_over_real_entries(model):
    x, history = inputs()
    tokens = x["session_tokens"]
    context = model.start(tokens, tokens, history_tokens=history)["context"]
    weights = np.asarray(context["history_attention"])
    assert weights.shape == (3, H) and np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights.sum(-1), [1, 0, 1], rtol=1e-5, atol=1e-6)
    assert np.all(weights[0, : H - 2] == 0) and np.all(weights[1] == 0)
    without = model.start(tokens, tokens)["context"]
    assert "history_attention" not in without
    plain = model.start(tokens, tokens, history_tokens=np.zeros_like(history))["context"]
    np.testing.assert_allclose(plain["memory"], without["memory"], rtol=1e-5, atol=1e-6)


def test_the_query_encoder_reads_the_history_too():
    """With `history_encoder="query"` the history's entries change the outputs of the rows
    that have them, and a masked-out history gives the outputs of no history."""
    model = tiny_mtn(H, history_encoder="query")
    x, history = inputs()
    _, other = inputs(seed=1)
    read = model({**x, "history_tokens": history})["hidden"]
    changed = model({**x, "history_tokens": other})["hidden"]
    masked = model({**x, "history_tokens": np.zeros_like(history)})["hidden"]
    plain = model(x)["hidden"]
    for row in (0, 2):  # rows 0 and 2 have real entries, row 1 none
        assert not np.allclose(read[row], changed[row])
    np.testing.assert_allclose(read[1], changed[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(masked, plain, rtol=1e-5, atol=1e-6)


def test_saves_and_loads_with_history_on(model, tmp_path):
    x, history = inputs()
    x["history_tokens"] = history
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert loaded.config.history_queries == H
    np.testing.assert_allclose(loaded(x)["hidden"], model(x)["hidden"], rtol=1e-5, atol=1e-6)


def test_trains_with_model_fit_on_history_batches():
    """`model.fit` on batches with histories trains the layers that read them: their
    weights move, which they would not if the history were ignored."""
    model = tiny_mtn(H)
    model.compile(optimizer="adam")
    x, history = inputs()
    x["history_tokens"] = history
    target = np.where(x["decoder_input"] > 0, x["decoder_input"], 0)
    reading = [v for v in model.trainable_weights if "history" in v.path]
    before = [np.array(v) for v in reading]
    logs = model.fit(x, target, batch_size=3, epochs=1, verbose=0).history
    assert np.isfinite(logs["loss"][0]) and reading
    assert all(not np.allclose(np.array(v), old) for v, old in zip(reading, before))
