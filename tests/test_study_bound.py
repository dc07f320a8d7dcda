"""studies/study_bound.py finds the grounded completions of what a person typed: the log's
queries, the last query retyped with a slip, the typed words continued by an attested pair."""

from studies.study_bound import grounded, word_pairs

LOG = {"student loan rates", "federal loan consolidation", "nfl standings", "nfl draft"}


def test_word_pairs_add_a_sessions_pairs_to_the_logs_and_leave_the_logs_as_they_are():
    log = word_pairs(LOG)
    both = word_pairs(["nfl standings week 3"], log)
    assert both["standings"] == {"week"} and both["nfl"] == {"standings", "draft"}
    assert "standings" not in log and log == word_pairs(LOG)


def test_grounded_completions_are_queries_retypes_and_attested_continuations():
    follows = word_pairs(LOG)
    assert grounded("student loan cons", ["student loans"], LOG, follows) == [
        "student loan consolidation"
    ]
    assert grounded("nfl st", ["nfl standings"], LOG, follows) == []
    assert grounded("nfl standigns", ["nfl standings"], LOG, follows) == ["nfl standings"]
    assert grounded("nfl standngs", ["nfl standings"], LOG, follows) == ["nfl standings"]
    assert grounded("nfl standings", ["nfl standings"], LOG, follows) == []
    assert grounded("weight watchers poi", ["weight watchers"], LOG, follows) == []
