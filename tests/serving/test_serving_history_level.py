"""An MTN with the third level (`history_queries`) served: the graph hands it the latest
history entries as token ids, an empty history answers as the same weights without the
third level, and `history_attention` is the model's own attention over what it read."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from mtn_keras.base.config import DecodeConfig, preset
from mtn_keras.data.vocab import SPECIALS, Vocabulary
from mtn_keras.export import export
from mtn_keras.models import build_model
from mtn_keras.serving.service import SuggestionService
from mtn_keras.training.artifacts import TrainedModel

pytestmark = pytest.mark.slow  # builds a model and traces the service

N, H = 4, 3
WORDS = ["cheap", "flights", "lisbon", "weather", "hotels", "zoo", "paris", "rome"]
SESSION = tf.constant([["cheap flights", "lisbon weather"], ["", "paris hotels"]])
HISTORY = tf.constant([["rome", "lisbon zoo", "", "paris", "Rome!", "cheap hotels"], [""] * 6])


DECODING = DecodeConfig(k=4, beam=6, xla=False)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An untrained tiny MTN with the third level and no ranking."""
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens = len(SPECIALS) + len(WORDS), N
    config.history_queries = H
    keras.utils.set_random_seed(1)
    model = build_model("mtn", config)
    model.build()
    path = str(tmp_path_factory.mktemp("history-level"))
    return TrainedModel("mtn", model, Vocabulary((*SPECIALS, *WORDS)), config, path)


@pytest.fixture(scope="module")
def service(trained):
    return SuggestionService(trained.model, trained.vocab.tokens, DECODING)


@pytest.fixture(scope="module")
def without_level(trained):
    """A service over the same weights in a model without the third level: its graph
    hands the model no history at all."""
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens = trained.config.vocab_size, N
    model = build_model("mtn", config)
    model.build()
    weights = [v for v in trained.model.weights if "history" not in v.path]
    assert [v.shape for v in weights] == [v.shape for v in model.weights]
    for variable, value in zip(model.weights, weights):
        variable.assign(value)
    return SuggestionService(model, trained.vocab.tokens, DECODING)


def test_the_latest_entries_reach_the_model_as_token_ids(service):
    kept = service.kept_history(SESSION, HISTORY)
    tokens = service.encoder.history_ids(kept, service.model.config.history_queries).numpy()
    ids = {word: i for i, word in enumerate((*SPECIALS, *WORDS))}
    assert tokens.shape == (2, H, N)
    # the last three real entries, oldest first: "paris", "rome" (normalised), "cheap hotels"
    expected = [
        [ids["paris"], 0, 0, 0],
        [ids["rome"], 0, 0, 0],
        [ids["cheap"], ids["hotels"], 0, 0],
    ]
    np.testing.assert_array_equal(tokens[0], expected)
    np.testing.assert_array_equal(tokens[1], 0)


def test_history_attention_is_the_models_over_what_it_read(service):
    out = service.suggest_with_history(SESSION, HISTORY)
    weights = out["history_attention"].numpy()
    kept = out["history"].numpy()
    assert weights.shape == kept.shape
    # only the latest H real entries are read: they sum to one, the rest weigh nothing
    np.testing.assert_allclose(weights[0, -H:].sum(), 1.0, rtol=1e-5)
    assert (weights[0, -H:] > 0).all() and (weights[0, :-H] == 0).all()
    np.testing.assert_array_equal(weights[1], 0)  # no history, nothing read


def test_the_history_changes_the_models_scores(service, without_level):
    read = service.suggest_with_history(SESSION, HISTORY)["scores"].numpy()[0]
    plain = without_level.suggest(SESSION)["scores"].numpy()[0]
    assert not np.allclose(read, plain)


def test_an_empty_history_answers_as_a_model_that_reads_none(service, without_level):
    empty = service.suggest_with_history(SESSION, tf.fill([2, 6], ""))
    plain = without_level.suggest(SESSION)
    np.testing.assert_array_equal(empty["suggestions"].numpy(), plain["suggestions"].numpy())
    np.testing.assert_allclose(empty["scores"].numpy(), plain["scores"].numpy(), rtol=1e-5)
    np.testing.assert_array_equal(empty["history_attention"].numpy(), 0)


def test_the_export_reads_the_history_without_a_ranking(trained, service, tmp_path):
    export(trained, str(tmp_path / "savedmodel"), DECODING)
    loaded = tf.saved_model.load(str(tmp_path / "savedmodel"))
    out = loaded.signatures["suggest_with_history"](session=SESSION, history=HISTORY)
    expected = service.suggest_with_history(SESSION, HISTORY)
    for name in ("suggestions", "history"):
        np.testing.assert_array_equal(out[name].numpy(), expected[name].numpy())
    for name in ("scores", "history_attention"):
        np.testing.assert_allclose(out[name].numpy(), expected[name].numpy(), atol=1e-5)
