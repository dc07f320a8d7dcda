"""The user's history in the serving graph: its candidates (followers first, shared words,
never a query of the session) and its evidence for any candidate."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.ranking.history_lookup import HISTORY_EVIDENCE, HistoryLookup  # noqa: E402

HISTORY = [
    "pizza hut",
    "dominos pizza",
    "weather boston",
    "pizza hut",
    "pizza hut coupons",
    "red sox tickets",
    "weather boston",
    "boston marathon",
]
SESSION = ["weather boston"]


def kept(lookup, history):
    return lookup.kept(tf.constant([[""] * 3 + history], tf.string))


def session_inputs(session, width=3):
    queries = tf.constant([[""] * (width - len(session)) + session])
    words = tf.strings.split(queries).to_tensor("", shape=[None, None, 4])
    return queries, words


def test_history_candidates_follow_the_session_then_share_its_words():
    lookup = HistoryLookup(size=10, candidates=5)
    history = kept(lookup, HISTORY)
    assert history.shape == (1, 10)
    assert [t.decode() for t in history.numpy()[0][-len(HISTORY) :]] == HISTORY
    queries, words = session_inputs(SESSION)
    found = [t.decode() for t in lookup.candidates(history, queries, words).numpy()[0]]
    # what followed "weather boston" (twice: "pizza hut", "boston marathon"), the followed
    # one that shares a word first among equals; never the session's own query
    assert set(found[:2]) == {"pizza hut", "boston marathon"}
    assert "weather boston" not in found
    assert len(found) == 5 and len(set(found)) == 5


def test_an_empty_history_offers_nothing_and_says_nothing():
    lookup = HistoryLookup(size=6, candidates=4)
    history = lookup.kept(tf.zeros([1, 0], tf.string))
    queries, words = session_inputs(SESSION)
    assert lookup.candidates(history, queries, words).numpy().tolist() == [[b""] * 4]
    texts = tf.constant([["pizza hut", ""]])
    evidence = lookup.evidence(history, queries, texts, tf.strings.split(texts).to_tensor(""))
    assert evidence.shape == (1, 2, len(HISTORY_EVIDENCE)) and not evidence.numpy().any()


def test_the_evidence_counts_what_the_user_did():
    lookup = HistoryLookup(size=10)
    history = kept(lookup, HISTORY)
    queries, _ = session_inputs(SESSION)
    texts = tf.constant([["pizza hut", "boston marathon", "red sox tickets", "new thing"]])
    words = tf.strings.split(texts).to_tensor("")
    evidence = lookup.evidence(history, queries, texts, words).numpy()[0]
    found = dict(zip(HISTORY_EVIDENCE, evidence.T))
    np.testing.assert_allclose(found["history_follow_last"], np.log1p([1, 1, 0, 0]))
    np.testing.assert_allclose(found["history_count"], np.log1p([2, 1, 1, 0]))
    # the latest entry 1, then 1 / (1 + later entries / 10); never typed: 0
    np.testing.assert_allclose(found["history_recency"], [1 / 1.4, 1.0, 1 / 1.2, 0.0], rtol=1e-6)
    np.testing.assert_allclose(found["history_words"], [1, 1, 1, 0])
    np.testing.assert_allclose(found["history_size"], np.log1p(len(HISTORY)))


def test_a_query_repeated_right_after_itself_is_kept_once():
    lookup = HistoryLookup(size=4)
    history = ["pizza hut", "", "pizza hut", "weather boston", "pizza hut", "pizza hut"]
    found = [t.decode() for t in kept(lookup, history).numpy()[0]]
    # the gap ("") between two "pizza hut" is no query: they are one, as the last two are
    assert found == ["", "pizza hut", "weather boston", "pizza hut"]
