"""The safety rule inside the serving graph: an untrained tiny MTN over a vocabulary with
explicit words and words for minors writes them freely, and the graph shows none of them by
default, the explicit ones with `explicit`, and never a query that seeks sexual content
involving minors, whatever the settings (`--no-filter` of every filter included)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from mtn_keras.base.config import FILTERS, DecodeConfig, preset
from mtn_keras.data.safety import child_unsafe, explicit
from mtn_keras.data.vocab import SPECIALS
from mtn_keras.models import build_model
from mtn_keras.ranking.shown import Shown
from mtn_keras.serving.forbidden import banned_ids, last_check
from mtn_keras.serving.service import SuggestionService

N = 4
WORDS = ["cheap", "flights", "teen", "nude", "pics", "kids", "porn", "party", "weather", "pthc"]
SESSIONS = [
    ["teen pics", "nude pics"],
    ["kids party", "porn pics"],
    ["cheap flights", "teen party"],
    ["nude weather", "kids pics"],
    ["pthc pics", "teen nude"],
]


@pytest.fixture(scope="module")
def trained():
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens = len(SPECIALS) + len(WORDS), N
    keras.utils.set_random_seed(3)
    model = build_model("mtn", config)
    model.build()
    return model


def shown(service, **inputs):
    """Every suggestion the service shows for SESSIONS, its suggest and complete alike."""
    session = tf.constant(SESSIONS)
    texts = [service.suggest(session)["suggestions"]]
    for typed in ["", "te", "nu", "kids ", "p"]:
        prefix = tf.constant([typed] * len(SESSIONS))
        texts.append(service.complete(session, prefix)["suggestions"])
    return [t.decode() for out in texts for t in out.numpy().ravel() if t]


@pytest.mark.slow
@pytest.mark.parametrize("filters", [FILTERS, ()], ids=["filters", "no-filter"])
def test_explicit_items_show_only_when_asked_and_abuse_queries_never(trained, filters):
    vocab = (*SPECIALS, *WORDS)
    for asked in (False, True):
        decoding = DecodeConfig(k=5, beam=8, xla=False, filters=filters, explicit=asked)
        found = shown(SuggestionService(trained, vocab, decoding))
        assert found and not any(map(child_unsafe, found)), found
        assert any(map(explicit, found)) == asked, found


def test_the_beam_never_writes_a_forbidden_word():
    vocab = (*SPECIALS, *WORDS)
    ids = {word: i for i, word in enumerate(vocab)}
    default = set(banned_ids(vocab, [], pieces=False))
    assert {ids["nude"], ids["porn"], ids["pthc"]} <= default
    assert not {ids["teen"], ids["kids"], ids["pics"]} & default
    asked = set(banned_ids(vocab, [], pieces=False, explicit_shown=True))
    assert ids["pthc"] in asked and not {ids["nude"], ids["porn"]} & asked
    # Under WordPiece a piece is a part of other words: the graph's checks alone guard it.
    assert banned_ids(vocab, ["porn"], pieces=True) == [0, 1, 2]  # <pad>, <unk>, <bos>


def test_the_last_check_drops_what_the_rule_forbids_and_keeps_the_order():
    texts = tf.constant([["cheap flights", "teen porn", "nude pics", "kids party", ""]])
    scores = tf.constant([[-1.0, -2.0, -3.0, -4.0, -np.inf]])
    sources = tf.constant([["model", "log", "history", "model", ""]])
    copied = tf.reshape(tf.range(5.0), [1, 5, 1])
    expected = {
        False: ["cheap flights", "kids party"],
        True: ["cheap flights", "nude pics", "kids party"],
    }
    for asked, kept in expected.items():
        out = last_check(Shown(scores, texts, sources, copied), asked)
        got = [t.decode() for t in out.texts.numpy()[0]]
        assert got[: len(kept)] == kept and set(got[len(kept) :]) == {""}
        assert np.all(np.isneginf(out.scores.numpy()[0, len(kept) :]))
        assert out.sources.numpy()[0, 0] == b"model"
