"""What the user typed, read by one rule for every source: a whole typed word completes
itself, finished words stand whole at the start of the beam's and the log's candidates alike,
a prefix without words answers as `suggest`; blocked words ban no WordPiece pieces; and a
candidate's model score does not depend on which source proposed it."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.base.config import DecodeConfig, preset
from mtn_keras.data.vocab import SPECIALS
from mtn_keras.models import build_model
from mtn_keras.serving.encoding import SessionEncoder
from mtn_keras.serving.prefix import PrefixConstraint
from mtn_keras.serving.service import SuggestionService
from mtn_keras.serving.steps import banned_ids

N = 4
WORDS = ["cheap", "flights", "hotel", "hotels", "deals", "we", "weather", "the", "people"]
PIECES = ["charles", "dick", "##ens", "novels"]


@functools.cache
def untrained_service(tokens, k=5):
    """A service on an untrained tiny MTN over `tokens` (after the specials): what it
    suggests is arbitrary, what the rules allow is not."""
    config, _ = preset("tiny")
    config.vocab_size, config.max_query_tokens = len(SPECIALS) + len(tokens), N
    keras.utils.set_random_seed(0)
    model = build_model("mtn", config)
    model.build()
    vocab = (*SPECIALS, *tokens)
    return SuggestionService(model, vocab, DecodeConfig(k=k, beam=6, xla=False))


def texts(out):
    return [[t.decode() for t in row] for row in out["suggestions"].numpy()]


@pytest.mark.slow
def test_a_whole_typed_word_completes_itself():
    """ "hotel" without a space is completed by "hotel" as well as "hotels"."""
    service = untrained_service(tuple(WORDS))
    inputs = service.encoder.prepare(tf.constant([["cheap flights"]]))
    _, allowed, at = service.typed.typed_words(service.typed.read(tf.constant(["hotel"])), inputs)
    vocab = (*SPECIALS, *WORDS)
    completing = [vocab[i] for i in np.flatnonzero(allowed.numpy()[0, : len(vocab)])]
    assert sorted(completing) == ["hotel", "hotels"] and at.numpy().tolist() == [0]
    out = texts(service.complete(tf.constant([["cheap flights"]]), tf.constant(["hotel"])))[0]
    shown = [t for t in out if t]
    assert shown and all(t.split()[0] in ("hotel", "hotels") for t in shown), out


def beam_allows(service, text, prefix):
    """Whether the beam's constraint for `prefix` lets it write `text` (a query of whole
    vocabulary words): the forced words first, then an allowed word where one must be."""
    inputs = service.encoder.prepare(tf.constant([["cheap flights"]]))
    typed, allowed, at = service.typed.typed_words(
        service.typed.read(tf.constant([prefix])), inputs
    )
    forced = [t.decode() for t in typed.numpy()[0] if t]
    words = text.split()
    if words[: len(forced)] != forced:
        return False
    at = int(at.numpy()[0])
    if at < 0:
        return True
    vocab = (*SPECIALS, *WORDS)
    return at < len(words) and bool(allowed.numpy()[0, vocab.index(words[at])])


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    typed=st.lists(st.sampled_from(WORDS + ["hot", "wea", "w", "che", "fli"]), max_size=3),
    end=st.sampled_from(["", " ", "!", " !", "  "]),
    candidate=st.lists(st.sampled_from(WORDS), min_size=1, max_size=N),
)
def test_the_beam_and_the_log_follow_one_prefix_rule(typed, end, candidate):
    """A log candidate passes the prefix exactly when the beam may write it."""
    service = untrained_service(tuple(WORDS))
    prefix, text = " ".join(typed) + end, " ".join(candidate)
    read = service.typed.read(tf.constant([prefix]))
    log_rule = bool(service.typed.starts_with_typed(tf.constant([[text]]), read).numpy()[0, 0])
    assert log_rule == beam_allows(service, text, prefix), (prefix, text)


def test_the_log_reads_a_finished_word_whole():
    """ "we " is the word "we": "weather channel" no longer passes it; "we" still does."""
    encoder = SessionEncoder((*SPECIALS, *WORDS), 3, N)
    typed = PrefixConstraint(encoder, tf.zeros([len(SPECIALS) + len(WORDS)], tf.bool))
    candidates = tf.constant([["weather channel", "we the people", "hotel deals", "hotels"]] * 4)
    prefixes = tf.constant(["we ", "we", "hotel", "HOTEL!"])
    got = typed.starts_with_typed(candidates, typed.read(prefixes)).numpy().tolist()
    assert got == [
        [False, True, False, False],
        [True, True, False, False],
        [False, False, True, True],
        [False, False, True, False],
    ]


@pytest.mark.slow
@pytest.mark.parametrize("prefix", [" ", "!", '"', "  ?? "])
def test_a_prefix_without_words_answers_as_suggest(prefix):
    """It neither constrains nor vouches for unrelated suggestions nor lifts the threshold."""
    service = untrained_service(tuple(WORDS))
    session = tf.constant([["cheap flights", "hotel deals"]])
    plain = service.suggest(session)
    done = service.complete(session, tf.constant([prefix]))
    assert texts(done) == texts(plain)
    np.testing.assert_array_equal(done["scores"].numpy(), plain["scores"].numpy())


def test_blocked_words_ban_whole_words_never_pieces():
    phrases = ["dick", "porn"]
    words = (*SPECIALS, "dick", "porn", "novels")
    pieces = (*SPECIALS, *PIECES)
    assert banned_ids(words, phrases, pieces=False) == [0, 1, 2, 4, 5]
    assert banned_ids(pieces, phrases, pieces=True) == [0, 1, 2]


@pytest.mark.slow
def test_a_word_that_starts_with_a_blocked_piece_comes_back():
    """ "dickens" is spelt "dick ##ens": typed "dick", it completes, and the word filter
    still drops the blocked word alone."""
    service = untrained_service(tuple(PIECES))
    assert service.pieces
    out = texts(service.complete(tf.constant([["charles novels"]]), tf.constant(["dick"])))[0]
    shown = [t for t in out if t]
    assert shown and all(t.split()[0] == "dickens" for t in shown), out


@pytest.mark.slow
def test_a_candidates_score_does_not_depend_on_its_source(ranked):
    """The log's model score of a candidate equals the beam's own, known words and words
    outside the vocabulary (typed ones, scored as the model's rarest word) alike."""
    from mtn_keras.ranking.scoring import candidate_hidden, candidate_log_probs

    service = SuggestionService(
        ranked.model, ranked.vocab.tokens, DecodeConfig(k=5, beam=6, xla=False), ranked.ranking
    )
    session = tf.constant([["cheap flights", "best cheap flights"], ["hotel deals", "used cars"]])
    for prefix in (None, tf.constant(["zzyzx ", "qwerty "])):
        prepared = service.prepare(session, prefix)
        kept = service.kept_history(session)
        beam = service.search(prepared, kept, service.pooled(prepared, kept)).beam
        inputs = prepared.session
        words = beam.words[:, :, : service.n]
        flat = tf.reshape(words, [2, -1])
        ids = tf.reshape(service.encoder.word_ids(flat, inputs), [2, -1, service.n])
        state = service.model.start(inputs.tokens, inputs.ext)
        scored = candidate_log_probs(
            service.model, state, ids, candidate_hidden(service.model, state, ids)
        )
        found = np.isfinite(beam.log_probs.numpy())
        assert found.any()
        if prefix is not None:
            firsts = {row[0].decode() for row in words.numpy()[found]}
            assert firsts == {"zzyzx", "qwerty"}, firsts
        np.testing.assert_allclose(
            scored["log_probs"].numpy()[found],
            beam.log_probs.numpy()[found],
            rtol=1e-4,
            atol=1e-4,
        )


@pytest.mark.slow
def test_ranked_completions_keep_a_finished_word_whole(ranked):
    service = SuggestionService(
        ranked.model,
        ranked.vocab.tokens,
        DecodeConfig(k=5, beam=6, xla=False, threshold=0.0),
        ranked.ranking,
    )
    session = tf.constant([["cheap flights", "hotel deals"]] * 3)
    out = texts(service.complete(session, tf.constant(["hotel ", "hot", " "])))
    assert out[0] and all(t.split()[0] == "hotel" for t in out[0] if t), out[0]
    assert any(out[1]) and all(t.startswith("hot") for t in out[1] if t), out[1]
    assert out[2] == texts(service.suggest(session[2:]))[0]
