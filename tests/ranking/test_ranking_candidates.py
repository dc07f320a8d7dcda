"""Which corrections of what was typed the candidate pool reads: only of a word known nowhere
(not English, not the log's, not the session's), and only where the channel model prefers
the correction."""

import pytest

from mtn_keras.ranking.log_index import QueryLogIndex

SESSIONS = [
    ["rom hip", "rom hip exercise", "pizza hut"],
    ["rom hip", "pizza hut", "pizza hut coupons"],
    ["pizza hut", "pizza hut menu", "piza hut"],
    ["pizza hut", "pizza hut", "pizza hut"],
]


@pytest.fixture(scope="module")
def pool():
    from mtn_keras.ranking.candidates import CandidatePool

    return CandidatePool(QueryLogIndex.build(SESSIONS), max_queries=2)


def corrections(pool, session, typed):
    """The log's completions of `typed` with one slip corrected that the pool gathers."""
    import tensorflow as tf

    from mtn_keras.ranking.candidates import retyped
    from mtn_keras.serving.prefix import Typed
    from mtn_keras.serving.word_starts import WordStarts

    queries = tf.constant([session])
    words = tf.strings.split(queries).to_tensor("", shape=[1, len(session), 5])
    read = Typed(tf.constant([typed.strip()]), tf.constant([not typed.endswith(" ")]), True)
    span = WordStarts(sum(map(str.split, sum(SESSIONS, [])), [])).span(read, words, None)
    typed = tf.constant([typed])
    history = tf.constant([[""]])
    found = pool.gather(queries, words, history, typed, retyped(queries, typed, span), span)
    return [
        t.decode()
        for t, s in zip(found.texts.numpy()[0], found.source.numpy())
        if t and s == b"fixed"
    ]


def test_a_word_known_anywhere_is_not_corrected(pool):
    assert corrections(pool, ["cheap flights", "cheap flights to rome"], "rome h") == []
    assert corrections(pool, ["cheap flights", "ancient history"], "rome h") == []  # English
    assert corrections(pool, ["cheap flights"], "romw h") == ["rom hip", "rom hip exercise"]


def test_a_slip_is_read_where_the_correction_is_far_more_typed(pool):
    # "pizza hut" (9 times) for "pizzs h": nothing completes it as typed
    assert corrections(pool, ["coupons"], "pizzs h")[:1] == ["pizza hut"]
    # "piza hut", typed once, has "pizza hut" one edit away, yet "pizza hut" completes
    # "pizza h" as typed: no correction pads the list
    assert corrections(pool, ["coupons"], "pizza h") == []
