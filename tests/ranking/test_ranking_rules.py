"""Every rule that exists both in the serving graph and in plain Python agrees with its twin
on random candidates and sessions (hypothesis): the filters (`filters.py` / `rules.py`),
the word-set key of "the same words in any order", and which queries the model reads
(`SessionEncoder.prepare` / the client's `used_queries`)."""

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data.text import normalise
from mtn_keras.ranking import filters, rules

WORDS = ["cheap", "flights", "rome", "nude", "red", "sox", "hotel", "of", "the"]
WIDTH = 5
TEXT = st.lists(st.sampled_from(WORDS), max_size=WIDTH).map(" ".join)
PHRASES = ["nude", "red sox"]
pytestmark = pytest.mark.slow  # many property examples


def words_of(texts):
    return [(t.split() + [""] * WIDTH)[:WIDTH] for t in texts]


@settings(max_examples=80, deadline=None)
@given(
    candidates=st.lists(TEXT, min_size=1, max_size=6),
    session=st.lists(TEXT, min_size=1, max_size=3),
)
def test_the_filters_agree_with_their_python_twins(candidates, session):
    words = tf.constant([words_of(candidates)])
    inside = filters.inside_a_query(words, tf.constant([words_of(session)])).numpy()[0]
    repeats = filters.repeats_a_word(words).numpy()[0]
    blocked = filters.is_blocked(tf.constant(candidates), filters.blocked_pattern(PHRASES)).numpy()
    none = tf.zeros([1, len(candidates)], tf.bool)
    session_words = tf.constant([words_of(session)])
    related = filters.related(words, session_words, none, tf.constant([False])).numpy()[0]
    for i, text in enumerate(candidates):
        assert inside[i] == rules.repeats_session(text, session), (text, session)
        assert related[i] == rules.relates(text, session), (text, session)
        assert repeats[i] == rules.repeats_a_word(text), text
        assert blocked[i] == rules.blocks(text, PHRASES), text


@settings(max_examples=60, deadline=None)
@given(candidates=st.lists(TEXT.filter(bool), min_size=2, max_size=6))
def test_the_same_words_in_any_order_are_one_suggestion_in_both(candidates):
    """With equal scores the first of a word set stays, in the graph as in Python."""
    scores = tf.zeros([1, len(candidates)])
    dropped = filters.same_words_as_better(tf.constant([words_of(candidates)]), scores).numpy()[0]
    keys = [rules.word_set(text) for text in candidates]
    assert dropped.tolist() == [key in keys[:i] for i, key in enumerate(keys)]


QUERY = st.one_of(
    st.sampled_from(["", "?!", "  ", "Cheap flights", "rome", "x"]), st.text(max_size=6)
)


@settings(max_examples=60, deadline=None)
@given(session=st.lists(QUERY, max_size=7))
def test_the_app_names_the_queries_the_model_read(session):
    from mtn_keras.client.answer import used_queries
    from mtn_keras.serving.encoding import SessionEncoder

    encoder = SessionEncoder(["<pad>", "<unk>", "<bos>", "<eos>", "cheap"], 3, 4)
    queries = encoder.prepare(tf.constant([session or [""]], tf.string)).queries.numpy()[0]
    read = [q.decode() for q in queries if q]
    assert [normalise(session[i]) for i in used_queries(session, len(read))] == read


TYPED = st.text(alphabet="abé -", max_size=6)


@settings(max_examples=80, deadline=None)
@given(
    queries=st.lists(TYPED, min_size=1, max_size=6),
    typed=st.one_of(TYPED, st.integers(0, 6)),
    finished=st.booleans(),
)
def test_both_graph_forms_of_completion_agree_with_completes(queries, typed, finished):
    """`data.text.completes` on normalised strings, and its graph forms: the prefix lists'
    (`prefix_lookup.completes`) and the typed prefix's (`PrefixConstraint`)."""
    from mtn_keras.data.text import completes
    from mtn_keras.ranking.prefix_lookup import completes as graph_completes
    from mtn_keras.serving.prefix import PrefixConstraint, Typed

    texts = [normalise(query) for query in queries]
    # typed: some characters, or the first `typed` of a candidate, as a searcher types them
    text = normalise(texts[0][:typed] if isinstance(typed, int) else typed)
    prefix = text + " " if finished and text else text
    read = Typed(tf.constant([text]), tf.constant([not finished]), tf.constant([text != ""]))
    lists = graph_completes(tf.constant([texts]), tf.constant([prefix])).numpy()[0]
    typed_in = PrefixConstraint.starts_with_typed(tf.constant([texts]), read).numpy()[0]
    expected = [completes(query, prefix) for query in texts]
    assert lists.tolist() == expected and typed_in.tolist() == expected, (texts, prefix)


@settings(max_examples=40, deadline=None)
@given(history=st.lists(st.sampled_from(WORDS), max_size=8), size=st.integers(0, 10))
def test_the_latest_entries_are_one_rule_in_and_out_of_the_graph(history, size):
    """`data.history.latest` and its graph form `history_lookup.latest`."""
    from mtn_keras.data.history import latest
    from mtn_keras.ranking.history_lookup import latest as graph_latest

    kept = graph_latest(tf.constant([history], tf.string, [1, len(history)]), size)
    assert [t.decode() for t in kept.numpy()[0]] == latest(history, size)
