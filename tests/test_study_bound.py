"""tools/study_bound.py finds the grounded completions of what a person typed: the log's
queries, the last query retyped with a slip, the typed words continued by an attested pair."""

from tools.study_bound import grounded, one_edit, word_pairs

LOG = {"student loan rates", "federal loan consolidation", "nfl standings", "nfl draft"}


def test_one_edit_is_one_letter_added_dropped_replaced_or_two_swapped():
    assert one_edit("nfl standigns", "nfl standings")
    assert one_edit("flu", "flux") and one_edit("flux", "flu") and one_edit("abc", "abd")
    assert not one_edit("abc", "abc") and not one_edit("abc", "acbd")


def test_grounded_completions_are_queries_retypes_and_attested_continuations():
    follows = word_pairs(LOG)
    assert grounded("student loan cons", ["student loans"], LOG, follows) == [
        "student loan consolidation"
    ]
    assert grounded("nfl st", ["nfl standings"], LOG, follows) == []
    assert grounded("nfl standigns", ["nfl standings"], LOG, follows) == ["nfl standings"]
    assert grounded("weight watchers poi", ["weight watchers"], LOG, follows) == []
