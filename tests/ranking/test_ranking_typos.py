"""Typo tolerance in the graph: the strings one edit from what was typed, and which texts start
within one edit of it, against a plain Python statement of the same rule."""

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data.text import completes
from mtn_keras.ranking.typos import edit_variants, near_prefix


def variants(text, whole=False, alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ", min_chars=5):
    """The rule in plain Python: one character dropped, two neighbours swapped, one replaced
    or one inserted, never the first; in a prefix the last is neither dropped nor replaced
    and nothing is added after it."""
    if len(text) < min_chars:
        return set()
    end = len(text) if whole else len(text) - 1  # where a drop or a replacement may stand
    found = set()
    for at in range(1, len(text) + (1 if whole else 0)):
        if at < end:
            found.add(text[:at] + text[at + 1 :])
            found |= {text[:at] + c + text[at + 1 :] for c in alphabet}
        if at + 1 < len(text):
            found.add(text[:at] + text[at + 1] + text[at] + text[at + 2 :])
        found |= {text[:at] + c + text[at:] for c in alphabet}
    return found - {text}


def graph_variants(text, whole=False):
    out = edit_variants(tf.constant([text]), whole=whole).numpy()[0]
    return {v.decode() for v in out if v} - {text}


@pytest.mark.parametrize("text", ["weaht", "myspce ", "abcdefgh", "a b c", "aab"])
def test_the_graphs_variants_are_the_rule(text):
    assert graph_variants(text) == variants(text)
    assert graph_variants(text, whole=True) == variants(text, whole=True)


def test_a_slip_is_forgiven_from_five_characters_and_never_on_the_first():
    assert graph_variants("weah") == set()
    found = graph_variants("weaht")
    assert {"weath", "weat", "weght"} <= found
    assert not any(v[0] != "w" for v in found)
    assert "weah" not in found and "weahx" not in found  # the letter being typed stays
    assert "myspace" in graph_variants("myspce", whole=True)


def near(texts, typed):
    return near_prefix(tf.constant([texts]), tf.constant([typed])).numpy()[0].tolist()


def test_texts_that_start_one_slip_from_what_was_typed():
    texts = ["weather", "weather channel", "wheat", "weaht", "weat", "wexxht", "eweaht"]
    assert near(texts, "weaht") == [True, True, False, False, True, False, False]
    assert near(["myspace layouts", "myspce", "my space"], "myspce ") == [True, False, False]
    assert near(["weather"], "weat") == [False]  # fewer than five characters: as typed only


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab ", min_size=5, max_size=7).filter(lambda t: t[0] != " "),
    st.lists(st.text(alphabet="ab ", min_size=1, max_size=9), min_size=1, max_size=6),
)
def test_near_prefix_is_the_rule(typed, texts):
    """A text starts within one slip of `typed` when it completes one of typed's variants
    and does not complete typed itself."""
    expected = [
        not completes(text, typed)
        and any(completes(text, v) for v in variants(typed, alphabet="ab "))
        for text in texts
    ]
    assert near(texts, typed) == expected


def test_a_slip_is_read_only_inside_the_word_known_nowhere():
    """The edit falls inside the span of the typed word known nowhere (word_starts.slip_span):
    "va no" is never "va po", "bostn weather" is "boston weather"."""
    texts = tf.constant([["va power", "va now", "boston weather", "bostn weathers"]] * 3)
    typed = tf.constant(["va no", "bostn weath", "bostn weath"])
    span = tf.constant([[-1, -1], [0, 5], [6, 11]])  # none; "bostn"; "weath" (no edit there)
    found = near_prefix(texts, typed, tf.fill([3], True), span).numpy().tolist()
    assert found == [[False] * 4, [False, False, True, False], [False] * 4]
