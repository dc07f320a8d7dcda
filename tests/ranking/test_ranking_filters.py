"""Each filter on hand-made sessions, and the evaluation's Python checks agree with them."""

import numpy as np

from mtn_keras.ranking.blocklist import EVERYDAY_WORDS, blocked_phrases
from mtn_keras.ranking.rules import blocks, repeats_a_word, repeats_session

SESSION = ["weather boston", "boston red sox tickets"]
CANDIDATES = [
    "weather boston",  # a session query
    "red sox",  # inside one
    "boston weather",  # inside one, in another order
    "red sox schedule",  # new
    "sox sox tickets",  # a word twice
    "nude beach boston",  # a blocked word
    "",  # nothing
]


def words_of(texts, width=6):
    return [(t.split() + [""] * width)[:width] for t in texts]


def test_each_filter_in_the_graph_and_in_python():
    import tensorflow as tf

    from mtn_keras.ranking import filters

    words = tf.constant([words_of(CANDIDATES)])
    session = tf.constant([words_of(SESSION)])
    inside = filters.inside_a_query(words, session).numpy()[0]
    repeats = filters.repeats_a_word(words).numpy()[0]
    pattern = filters.blocked_pattern(blocked_phrases())
    blocked = filters.is_blocked(tf.constant(CANDIDATES), pattern).numpy()
    assert inside.tolist() == [True, True, True, False, True, False, True]
    assert repeats.tolist() == [False, False, False, False, True, False, False]
    assert blocked.tolist() == [False, False, False, False, False, True, False]
    for i, text in enumerate(CANDIDATES[:-1]):
        assert inside[i] == repeats_session(text, SESSION)
        assert repeats[i] == repeats_a_word(text)
        assert blocked[i] == blocks(text, blocked_phrases())
    kept = filters.keep(
        words,
        tf.constant([CANDIDATES]),
        session,
        pattern,
        ("session", "repeats", "blocked"),
        tf.constant([[True] * 7]),
    ).numpy()[0]
    assert [c for c, k in zip(CANDIDATES, kept) if k] == ["red sox schedule"]
    everything = filters.keep(
        words, tf.constant([CANDIDATES]), session, pattern, (), tf.constant([[True] * 7])
    )
    assert everything.numpy()[0].tolist() == [True] * 6 + [False]


def test_a_typed_completion_may_return_to_an_earlier_query_of_the_session_never_the_last():
    import tensorflow as tf

    from mtn_keras.ranking import filters

    queries = tf.constant([["", "weather boston", "red sox tickets", "boston red sox"]] * 2)
    texts = tf.constant([["weather boston", "red sox tickets", "boston red sox", "red sox"]] * 2)
    typed = tf.constant([True, False])
    returns, recency = filters.revisited(texts, queries, typed)
    assert returns.numpy().tolist() == [[True, True, False, False], [False] * 4]
    np.testing.assert_allclose(recency.numpy()[0], [1 / 3, 1 / 2, 0, 0])
    words = tf.constant([words_of(t.decode() for t in texts.numpy()[0])] * 2)
    session = tf.constant([words_of(q.decode() for q in queries.numpy()[0])] * 2)
    kept = filters.keep(words, texts, session, "(?!)", ("session",), None, returns).numpy()
    # typed: the earlier queries pass, the last and a cut-down copy do not; untyped: none
    assert kept.tolist() == [[True, True, False, False], [False] * 4]


def test_the_last_query_typed_again_with_a_slip_completes_to_it():
    import tensorflow as tf

    from mtn_keras.ranking import filters
    from mtn_keras.ranking.candidates import retyped

    queries = tf.constant([["nfl scores", "nfl standings"]] * 5)
    typed = tf.constant(["nfl standigns", "nfl standings", "nfl standi", "nfl standignss", "nfl"])
    span = tf.constant([[4, 13]] * 5)  # "standigns" and the like: known nowhere
    again = retyped(queries, typed, span)
    assert not retyped(queries, typed, tf.fill([5, 2], -1)).numpy().any()  # every word known
    # a slip of the whole query; not the query as typed, a start of it, two slips or too short
    assert again.numpy().tolist() == [True, False, False, False, False]
    texts = tf.constant([["nfl standings", "nfl scores"]] * 5)
    returns, recency = filters.revisited(texts, queries, tf.fill([5], True), again)
    assert returns.numpy()[:, 0].tolist() == [True, False, False, False, False]
    assert recency.numpy()[0].tolist() == [0.0, 0.5]  # the ranker's feature: earlier ones only


def test_a_suggestion_sharing_no_word_with_the_session_needs_a_witness():
    import tensorflow as tf

    from mtn_keras.ranking import filters

    words = tf.constant([words_of(["qxz reviews", "new york craigslist"])] * 2)
    session = tf.constant([words_of(["qxz"])] * 2)
    vouched = tf.constant([[False, False], [False, True]])
    kept = filters.keep(
        words,
        tf.constant([["qxz reviews", "new york craigslist"]] * 2),
        session,
        "(?!)",
        ("unrelated",),
        vouched,
    ).numpy()
    assert kept.tolist() == [[True, False], [True, True]]
    in_session = filters.in_session(words, session).numpy()[0]
    assert in_session.tolist() == [[True, False, False, False, False, False], [False] * 6]


def test_a_function_word_shared_with_the_session_relates_nothing():
    import tensorflow as tf

    from mtn_keras.ranking import filters

    texts = ["brisnet race of the day", "bank of the west", "capital one"]
    words = tf.constant([words_of(texts)])
    session = tf.constant([words_of(["bank of america"])])
    kept = filters.keep(
        words, tf.constant([texts]), session, "(?!)", ("unrelated",), tf.constant([[0, 0, 1]]) > 0
    ).numpy()[0]
    assert kept.tolist() == [False, True, True]  # "of" is no witness; "bank" is; so is the log
    related = filters.related(words, session, tf.zeros([1, 3], tf.bool), tf.constant([False]))
    assert related.numpy()[0].tolist() == [False, True, False]


def test_the_k_shown_differ():
    import tensorflow as tf

    from mtn_keras.ranking.filters import same_words_as_better

    words = tf.constant([words_of(["red sox tickets", "tickets red sox", "red sox"])])
    beaten = same_words_as_better(words, tf.constant([[0.2, 0.5, 0.1]])).numpy()[0]
    assert beaten.tolist() == [True, False, False]


def test_the_block_list_comes_from_the_package_less_everyday_words_plus_adult_ones():
    phrases = blocked_phrases()
    assert "nude" in phrases and "porn" in phrases and "blow job" in phrases
    assert blocks("britney sexy pictures", phrases) and not blocks(
        "vera wang wedding dresses", phrases
    )
    assert not EVERYDAY_WORDS & set(phrases)
    assert not blocks("hiv test results", phrases) and not blocks("pawn shop", phrases)
    assert blocks("actor name nude", phrases) and not blocks("nudes are art", ["nude"])
    assert np.all([p == " ".join(p.split()) for p in phrases])


def test_adult_phrases_of_innocent_words_are_blocked_and_the_words_alone_are_not():
    phrases = blocked_phrases()
    assert blocks("crossdressing forum", phrases) and blocks("diaper punishment", phrases)
    assert blocks("free adult chat rooms", phrases)
    for innocent in ("diaper bags", "punishment for theft", "adult education", "chat rooms"):
        assert not blocks(innocent, phrases), innocent
