"""The index as lookup tables in the graph: candidates and evidence agree with the index."""

import numpy as np
import pytest

from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.log_lookup import EVIDENCE

SESSIONS = [
    ["cheap flights", "cheap flights rome", "rome hotels"],
    ["cheap flights", "cheap flights rome", "rome hotels"],
    ["cheap flights", "paris hotels"],
    ["weather rome", "rome hotels"],
    ["used cars", "used cars online"],
]


@pytest.fixture(scope="module")
def lookup():
    from mtn_keras.ranking.log_lookup import LogLookup

    return LogLookup(QueryLogIndex.build(SESSIONS), candidates=6)


def texts(tensor):
    return [[t.decode() for t in row] for row in tensor.numpy()]


def test_candidates_of_a_known_last_query_come_first(lookup):
    import tensorflow as tf

    found = texts(
        lookup.candidates(tf.constant([["", "cheap flights"], ["used cars", "weather rome"]]))
    )
    assert found[0][:3] == ["cheap flights rome", "paris hotels", "rome hotels"]  # followers first
    assert found[1][0] == "rome hotels"  # the last query's follower before the earlier's
    assert "used cars online" in found[1]
    assert all(len(row) == 6 for row in found) and len(set(t for t in found[0] if t)) == len(
        [t for t in found[0] if t]
    )


def test_an_unknown_query_gets_the_logs_queries_on_its_rarest_words_and_their_evidence(lookup):
    import tensorflow as tf

    session = tf.constant([["cheap rome trip"], ["zzz qqq"]])
    found = texts(lookup.candidates(session))
    # "cheap" is in two queries, "rome" in three: the rarer word's queries come first, each
    # word's by count; a query of no known word gets nothing (no popular fallback).
    assert found == [
        ["cheap flights", "cheap flights rome", "rome hotels", "weather rome", "", ""],
        [""] * 6,
    ]
    candidates = tf.constant([["rome hotels", "used cars online"]] * 2)
    neighbour = lookup.evidence(session, candidates).numpy()[:, :, EVIDENCE.index("neighbour")]
    # "weather rome" and "cheap flights rome" hold "rome" and are followed by "rome hotels"
    assert neighbour[0, 0] > 0 and neighbour[0, 1] == 0 and (neighbour[1] == 0).all()


def test_evidence_matches_the_index(lookup):
    import tensorflow as tf

    session = tf.constant([["cheap flights", "cheap flights rome"]])
    candidates = tf.constant([["rome hotels", "paris hotels", "never logged"]])
    evidence = lookup.evidence(session, candidates).numpy()[0]
    column = {name: evidence[:, i] for i, name in enumerate(EVIDENCE)}
    np.testing.assert_allclose(column["follow_last"], np.log1p([2, 0, 0]))
    np.testing.assert_allclose(column["follow_share"], [1.0, 0, 0])
    np.testing.assert_allclose(column["later_session"], np.log1p([2 + 2, 1, 0]))
    np.testing.assert_allclose(column["popularity"], np.log1p([3, 1, 0]))
    assert column["neighbour"][0] > 0 and column["neighbour"][2] == 0


def test_a_candidate_is_witnessed_when_two_people_went_to_it_from_a_session_query():
    import tensorflow as tf

    from mtn_keras.ranking.log_lookup import LogLookup

    sessions = [["bank of america", "big soccer"]] * 3 + [["bank of america", "capital one"]] * 2
    index = QueryLogIndex.build(sessions, users=["a", "a", "a", "b", "c"])
    witnessed = LogLookup(index).witnessed(
        tf.constant([["", "bank of america"], ["capital one", "weather"]]),
        tf.constant([["capital one", "big soccer", "never typed"]] * 2),
    )
    assert witnessed.numpy().tolist() == [[True, False, False], [False] * 3]
