"""Query normalisation: lowercase, punctuation to spaces, spaces collapsed."""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtn_keras.data.text import normalise


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Red Bikes", "red bikes"),
        ("cheap,  flights!", "cheap flights"),
        ("rock'n'roll-hall", "rock n roll hall"),
        ("www.example.com", "www example com"),
        ("  tabs\there\r", "tabs here"),
        ("...", ""),
        ("", ""),
        ("a\x00b", "a b"),
        ("Crème Brûlée", "crème brûlée"),
        ("café—menu “today”", "café menu today"),
    ],
)
def test_data_normalise_examples(raw, expected):
    assert normalise(raw) == expected


@given(st.text())
def test_data_normalise_is_clean_and_idempotent(raw):
    query = normalise(raw)
    assert normalise(query) == query
    assert query == query.strip() and "  " not in query
    assert not set(query) & set(string.punctuation + "\t\n\r")


def test_a_query_completes_the_typed_prefix_word_by_word():
    from mtn_keras.data.text import completes

    assert completes("hotel deals", "hotel") and completes("hotels", "hotel")
    assert completes("hotel deals", "hotel ") and completes("hotel", "hotel ")
    assert not completes("hotels", "hotel ") and not completes("cheap hotel", "hotel")
    assert completes("hotel deals boston", "hotel de") and not completes("hotel", "hotels")
    assert completes("anything", "") and completes("anything", " ")
