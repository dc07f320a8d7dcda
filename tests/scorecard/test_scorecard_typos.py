"""`evaluate --prefix N --typos`: the seeded slips, fuzzy MPC and the non-words shown."""

import random

from hypothesis import given
from hypothesis import strategies as st

from mtn_keras.scorecard.completion import completion_cases
from mtn_keras.scorecard.completion_anchors import FuzzyMPC, MostPopularCompletion
from mtn_keras.scorecard.typos import nonword_share, one_edit, slipped


@given(st.text(alphabet="abcdefgh ", min_size=9, max_size=20), st.integers(3, 8), st.integers())
def test_a_slip_keeps_the_length_the_first_and_the_last_typed_character(query, size, seed):
    typed = slipped(query, size, random.Random(seed))
    clean = query[:size]
    assert len(typed) == len(clean) and typed[0] == clean[0]
    if typed != clean:  # one edit from a prefix of the query, within the typed characters
        assert any(typed in one_edit(query[:n]) for n in (size - 1, size, size + 1))


def test_slips_are_the_four_kinds_and_seeded():
    kinds = {slipped("weather forecast", 5, random.Random(seed)) for seed in range(40)}
    assert {"waeth", "wather"[:5], "weeat", "weaht"} & kinds
    assert "weath" not in kinds and all(k[0] == "w" for k in kinds)
    assert slipped("weather", 5, random.Random(3)) == slipped("weather", 5, random.Random(3))


def test_fuzzy_mpc_puts_exact_completions_first_then_one_edit_away():
    train = [["weather", "weather radar"], ["weather", "wealth"], ["webmd", "wealth fund"]]
    fuzzy = FuzzyMPC(MostPopularCompletion().fit(train))
    assert fuzzy.complete("weaht", 3) == ["weather", "wealth", "wealth fund"]
    assert fuzzy.complete("wealt", 2) == ["wealth", "wealth fund"]


def test_non_words_are_words_neither_the_log_nor_the_users_own_queries_hold():
    lists = [["weahter com", "weather"], ["myspce", "myspce com"]]
    known = {"weather", "com"}
    assert nonword_share(lists[:1], known) == 0.5
    assert nonword_share(lists, known) == 3 / 4
    assert nonword_share(lists, known, [["weather"], ["cheap flights", "myspce"]]) == 1 / 4


def test_typos_add_a_slipped_case_beside_each_clean_one():
    sessions = [["cheap flights", "weather forecast", "guitar lessons"]]
    cases = completion_cases(sessions, chars=(2, 5), typos=True)
    assert "2 characters, one slip" not in cases
    clean, slipped_case = cases["5 characters"], cases["5 characters, one slip"]
    assert clean[0] == slipped_case[0]  # the same pairs
    assert clean[1] == ["weath", "guita"] and slipped_case[1] != clean[1]


def test_typos_score_the_session_with_a_slip_in_its_last_query_too():
    sessions = [["cheap flights", "weather forecast", "guitar lessons"]]
    cases = completion_cases(sessions, chars=(5,), typos=True)
    clean, slipped_case = cases["nothing typed"], cases["nothing typed, last query with one slip"]
    assert clean[1] == slipped_case[1] == ["", ""]
    for (context, query), (slipped_context, same) in zip(clean[0], slipped_case[0]):
        assert query == same and context[:-1] == slipped_context[:-1]
        last, typed = context[-1], slipped_context[-1]
        assert typed != last and typed[0] == last[0] and typed[-1] == last[-1]


@given(st.text(alphabet="abcdefgh ", min_size=3, max_size=20), st.integers())
def test_a_slipped_query_keeps_its_first_and_last_character(query, seed):
    from mtn_keras.scorecard.typos import slipped_query

    typed = slipped_query(query, random.Random(seed))
    assert typed[0] == query[0] and typed[-1] == query[-1]
