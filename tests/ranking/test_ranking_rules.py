"""Every rule that exists both in the serving graph and in plain Python agrees with its twin
on random candidates and sessions (hypothesis): the filters (`filters.py` / `rules.py`),
the word-set key of "the same words in any order", and which queries the model reads
(`SessionEncoder.prepare` / the app's `used_queries`)."""

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data.text import normalise
from mtn_keras.ranking import filters, rules

WORDS = ["cheap", "flights", "rome", "nude", "red", "sox", "hotel"]
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
    for i, text in enumerate(candidates):
        assert inside[i] == rules.repeats_session(text, session), (text, session)
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
    from app.model import used_queries
    from mtn_keras.serving.encoding import SessionEncoder

    encoder = SessionEncoder(["<pad>", "<unk>", "<bos>", "<eos>", "cheap"], 3, 4)
    queries = encoder.prepare(tf.constant([session or [""]], tf.string))["queries"].numpy()[0]
    read = [q.decode() for q in queries if q]
    assert [normalise(session[i]) for i in used_queries(session, len(read))] == read
