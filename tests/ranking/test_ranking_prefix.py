"""The log's completions of a typed prefix: the index's keys and runs, and the graph's
lookup of them, against the MPC anchor's plain Python."""

import pytest

from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.prefix_index import prefix_arrays
from mtn_keras.scorecard.completion_anchors import MostPopularCompletion

SESSIONS = [
    ["paris hilton", "paris hilton", "paris hilton", "paris", "parish records"],
    ["paris hotels", "paris hotels", "parking", "park city", "h r block"],
    ["café paris", "cafétéria menu", "car rental", "cars", "damn cars"],
    ["zebra", "parade", "pardon", "parrot", "party"],
]
TYPED = ["par", "paris ", "h r b", "caf", "café ", "zzz", "parish records and more", "", "d"]


@pytest.fixture(scope="module")
def index():
    return QueryLogIndex.build(SESSIONS, blocked=("damn",))


def completions(index, typed, top=None):
    import tensorflow as tf

    from mtn_keras.ranking.log_lookup import LogLookup
    from mtn_keras.ranking.prefix_lookup import PrefixLookup

    log = LogLookup(index)
    found = PrefixLookup(index, log.queries, log.counts).completions(tf.constant(typed))
    return [[index.queries[i] for i in row if i >= 0] for row in found.numpy()]


def test_completions_are_the_most_frequent_first_ties_by_text(index):
    found = dict(zip(TYPED, completions(index, TYPED)))
    # 3 "paris hilton", 2 "paris hotels", then the rest once each, by text
    assert found["par"][:4] == ["paris hilton", "paris hotels", "parade", "pardon"]
    assert found["paris "] == ["paris hilton", "paris hotels", "paris"]  # not "parish records"
    assert found["h r b"] == ["h r block"]
    assert found["caf"] == ["café paris", "cafétéria menu"] and found["café "] == ["café paris"]
    assert found["zzz"] == [] and found[""] == []
    assert found["parish records and more"] == []  # longer than any query
    assert found["d"] == []  # "damn cars" holds a blocked word: never offered


def test_the_graph_agrees_with_the_mpc_anchor_at_every_size(index):
    # Few completions per key (top 2), so that most prefixes are runs of the character order.
    mpc = MostPopularCompletion().fit(SESSIONS)
    offerable = [q != "damn cars" for q in index.queries]
    small = QueryLogIndex(**{**vars(index)})
    small.prefixes, small.prefix_codes, small.prefix_rows, small.prefix_order = prefix_arrays(
        index.queries, offerable, chars=4, top=2
    )
    typed = sorted({q[:size] for s in SESSIONS for q in s for size in range(1, 9)} - {"d", "da"})
    expected = [[q for q in mpc.complete(t, k=10) if q != "damn cars"] for t in typed]
    for t, want, have in zip(typed, expected, completions(small, typed)):
        if len(t) <= 4:
            assert have == want[:2], t
        else:  # past the keys' 4 characters, the longest key's completions filtered
            assert have == [q for q in want if q in have], t


def test_a_key_is_kept_only_where_it_has_more_completions_than_are_kept():
    queries = ["aa", "ab", "ac", "b"]
    keys, codes, rows, order = prefix_arrays(queries, [True] * 4, chars=3, top=2)
    found = dict(zip(keys, codes))
    assert found["a"] == 0 and rows[0].tolist() == [0, 1]  # three completions: a list of two
    assert set(found) == {"a", "aa", "ab", "ac", "b"}  # the first key of each run, no deeper
    assert [queries[i] for i in order] == ["aa", "ab", "ac", "b"]
    assert found["b"] == -order.tolist().index(3) - 1
