"""The list measures (scorecard/list_measures.py) on hand-made logs: grounded items (the
person's own words included), filler lists, SR@5 by kind of pair, the new-word hit@5 and the
log anchor."""

import numpy as np
import pytest

from mtn_keras.scorecard.anchors import LogAnchor, reading_history
from mtn_keras.scorecard.bootstrap import UserResamples
from mtn_keras.scorecard.grounding import LogPhrases, finished_words, grounded, typed_words
from mtn_keras.scorecard.list_measures import (
    ListLog,
    add_list_measures,
    anchor_figures,
    grounded_items,
    is_filler,
    kind_figures,
    new_word_hits,
    pair_kinds,
)
from mtn_keras.scorecard.list_table import list_table
from mtn_keras.scorecard.report import evaluate_suggesters

TRAIN = [
    ["cheap flights", "cheap flights to rome", "rome hotels"],
    ["red sox", "red sox tickets", "fenway park"],
    ["red sox", "red sox tickets"],
    ["red sox scores", "weather boston", "google"],
]
LOG = LogPhrases(query for session in TRAIN for query in session)


def test_a_whole_query_or_adjacent_pairs_of_the_log_ground_an_item():
    assert grounded("rome hotels", LOG)  # a whole query
    assert grounded("flights to rome hotels", LOG)  # every adjacent pair stands in one
    assert not grounded("cheap rome hotels", LOG)  # "cheap rome" stands side by side nowhere
    assert not grounded("sox red", LOG)  # the words are there, the pair is not
    assert grounded("fenway", LOG) and not grounded("plumbing", LOG)  # one word: a log word


def test_the_session_and_the_history_ground_their_own_queries_and_pairs():
    own = LogPhrases(["zzq plumbing", "boston plumbing"])
    assert not grounded("zzq plumbing", LOG) and grounded("zzq plumbing", LOG, own)
    assert grounded("weather boston plumbing", LOG, own)  # one pair of the log, one of own
    assert grounded("plumbing", LOG, own)  # one word of the session or the history


def test_a_word_the_log_lacks_that_the_person_typed_is_theirs_to_combine():
    typed = typed_words(["zzq"])
    assert grounded("zzq tickets", LOG, LogPhrases(["zzq"]), typed)
    assert grounded("red sox zzq tickets", LOG, LogPhrases(["zzq"]), typed)
    # a word the log has is no one's own: "red rome" must stand in a query
    assert not grounded("red rome", LOG, LogPhrases(["red"]), typed_words(["red"]))
    # a finished word of the prefix is typed, the one still being typed is not
    assert finished_words("zzq pl") == ["zzq"] and finished_words("zzq pl ") == ["zzq", "pl"]
    assert grounded("zzq tickets", LOG, typed=typed_words([], "zzq t"))
    assert not grounded("zzq tickets", LOG, typed=typed_words([], "zzq"))
    # the history grounds a list that read it: its words are not typed words
    assert not grounded("tickets qqx", LOG, LogPhrases([]), typed_words([]))


def test_grounded_items_read_the_history_only_where_given():
    pairs = [(["red sox"], "red sox tickets")]
    lists = [["red sox tickets", "zzq plumbing", "plumbing"]]
    assert grounded_items(lists, pairs, LOG).tolist() == [[1, 3]]
    with_history = grounded_items(lists, pairs, LOG, [["zzq plumbing"]])
    assert with_history.tolist() == [[3, 3]]
    # typed as a finished word of the prefix, "zzq" is the person's own: "plumbing" alone is not
    assert grounded_items(lists, pairs, LOG, prefixes=["zzq "]).tolist() == [[2, 3]]


def test_pairs_are_repeats_related_new_or_unrelated_new():
    pairs = [
        (["red sox tickets"], "red sox"),  # inside a query of the session: a repeat
        (["red sox"], "red sox tickets"),  # new, shares "red" and "sox"
        (["red sox"], "fenway park"),  # new, shares nothing
        ([], "google"),  # nothing before: new and unrelated
    ]
    assert pair_kinds(pairs).tolist() == [0, 1, 2, 2]


def test_a_filler_item_shares_no_word_and_follows_no_session_query_directly():
    follows = ListLog(TRAIN).follows
    assert is_filler(["google"], ["red sox"], follows)
    assert not is_filler(["google"], ["weather boston"], follows)  # it came right after
    assert not is_filler(["red sox tickets"], ["red sox"], follows)  # it shares a word
    # "fenway park" came two queries after "red sox" in the log, never right after it
    assert is_filler(["fenway park"], ["red sox"], follows)
    assert not is_filler(["fenway park"], ["red sox", "red sox tickets"], follows)
    assert not is_filler([], ["red sox"], follows)
    assert is_filler(["red sox tickets"] * 5 + ["google"], ["red sox"], follows) is False


def test_the_new_word_hit_needs_a_word_of_the_next_query_the_session_lacks():
    pairs = [(["red sox"], "red sox tickets")] * 3 + [(["red sox", "tickets"], "red sox tickets")]
    lists = [["cheap tickets"], ["red sox scores"], [], ["cheap tickets"]]
    assert new_word_hits(lists, pairs).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_the_log_anchor_offers_the_logs_queries_with_every_word_of_the_last_query():
    anchor = LogAnchor().fit(TRAIN)
    # most frequent first, never the last query itself
    assert anchor.suggest(["red sox"]) == [("red sox tickets", 2.0), ("red sox scores", 1.0)]
    assert anchor.suggest(["cheap flights", "red sox"], k=1) == [("red sox tickets", 2.0)]
    assert anchor.suggest(["red sox tickets", "red sox"]) == [("red sox scores", 1.0)]
    assert anchor.suggest(["red sox"], prefix="red sox s") == [("red sox scores", 1.0)]
    assert anchor.suggest(["red zzq"]) == [] and anchor.suggest([]) == []


def test_the_figures_per_kind_and_the_log_anchor_on_related_new_pairs():
    pairs = [
        (["red sox tickets"], "red sox"),
        (["red sox"], "red sox tickets"),
        (["red sox"], "red sox scores"),
        (["cheap flights"], "fenway park"),
    ]
    lists = [["red sox"], ["red sox tickets"], ["cheap scores"], ["google"]]
    resampled = UserResamples(["u", "v", "w", "x"], 200, 0)
    kinds = kind_figures(lists, pairs, pair_kinds(pairs), resampled)
    assert kinds["repeat"]["pairs"] == 1 and kinds["repeat"]["sr@5"] == 100.0
    related = kinds["related-new"]
    assert related["pairs"] == 2 and related["sr@5"] == 50.0
    assert related["new_word_hit@5"] == 100.0  # "tickets", then "scores"
    assert kinds["unrelated-new"] == {**kinds["unrelated-new"], "pairs": 1, "sr@5": 0.0}
    assert related["new_word_hit@5_ci"][1] == 100.0
    # the anchor after "red sox": red sox tickets, red sox scores: both pairs hit
    anchor = anchor_figures(ListLog(TRAIN), pairs, ["u", "v", "w", "x"], 200, 0)
    assert anchor["pairs"] == 2 and anchor["sr@5"] == 100.0 and anchor["new_word_hit@5"] == 100.0
    assert anchor_figures(ListLog(TRAIN), pairs, None, 0, 0).keys() == {
        "pairs",
        "sr@5",
        "new_word_hit@5",
    }


def test_evaluate_suggesters_adds_the_measures_and_the_table_shows_them():
    pairs = [(["red sox"], "red sox tickets"), (["weather boston"], "zzq plumbing")]
    histories = [["zzq plumbing"], ["zzq plumbing"]]

    def plain(contexts):
        return [[("google", 1.0)] for _ in contexts]

    def same(contexts):
        return [[("zzq plumbing", 1.0), ("google", 0.5)] for _ in contexts]

    def remembers(contexts, histories):
        return same(contexts)

    reading_history(remembers)
    results = evaluate_suggesters(
        pairs,
        {"m": plain, "n": same, "m + history": remembers},
        progress=False,
        groups=["u", "v"],
        resamples=50,
        histories=histories,
        log=ListLog(TRAIN),
    )
    plain_row, history_row = results["m"]["list_measures"], results["m + history"]["list_measures"]
    assert plain_row["shown"] == 2 and plain_row["grounded"] == 100.0
    # "zzq plumbing" is the history's: grounded for the list that read it only
    assert history_row["grounded"] == 100.0 and results["n"]["list_measures"]["grounded"] == 50.0
    # after "red sox", google shares nothing and never came right after it; after weather it did
    assert plain_row["filler"] == 50.0 and len(plain_row["filler_ci"]) == 2
    assert plain_row["pair_kinds"]["unrelated-new"]["sr@5"] == 0.0
    assert history_row["pair_kinds"]["unrelated-new"]["sr@5"] == 100.0
    table = list_table({"": (results, None)})
    assert "| Model | Pairs repeat / related-new / unrelated-new | Grounded items |" in table
    assert "| m | 0 / 1 / 1 | 100.00 [" in table


def test_filler_lists_are_measured_only_where_nothing_was_typed():
    results = {"m": {}, "n": {}}
    pairs = [(["red sox"], "red sox tickets")]
    shown = {"m": [["google"]], "n": [["google"]]}
    add_list_measures(results, shown, pairs, ListLog(TRAIN), ["u"], 0, 0, prefixes=["re"])
    assert "filler" not in results["m"]["list_measures"]
    add_list_measures(results, shown, pairs, ListLog(TRAIN), ["u"], 0, 0, prefixes=[""])
    assert results["n"]["list_measures"]["filler"] == 100.0


def test_the_completion_report_has_the_measures_of_every_case_and_the_anchor():
    from mtn_keras.scorecard.completion import completion_report, completion_table
    from mtn_keras.scorecard.list_table import prefix_list_table

    test = [["red sox", "red sox tickets", "fenway park"], ["weather boston", "google"]]

    def complete(contexts, prefixes):
        return [["red sox tickets"] if "red sox tickets".startswith(p) else [] for p in prefixes]

    report = completion_report(complete, "toy", test, TRAIN, chars=(3,), resamples=20, typos=True)
    three = report["3 characters"]["toy"]["list_measures"]
    assert "filler" not in three and three["pair_kinds"]["related-new"]["pairs"] == 1
    assert three["pair_kinds"]["related-new"]["sr@5"] == 100.0
    nothing = report["nothing typed"]["MPC"]["list_measures"]
    assert nothing["filler"] == 0.0 and nothing["shown"] == 0
    assert report["log_anchor"]["3 characters"]["sr@5"] == 100.0  # "red" completes it
    assert report["log_anchor"]["nothing typed"]["new_word_hit@5"] == 100.0
    completion_table(report)  # the log anchor is no case
    table = prefix_list_table(report)
    assert "| 3 characters | log anchor (related-new pairs) | – / 1 / – |" in table
    assert np.isfinite(three["grounded"])


@pytest.fixture
def served():
    """A client of a made-up export (mtn_keras.load's Suggester over a backend that answers
    always the same two suggestions)."""
    from mtn_keras.client.suggester import Suggester

    class Export:
        signatures = {"complete": {"suggestions", "scores"}}
        settings = {"k": 5}

        def run(self, name, inputs):
            rows = len(inputs["session"])
            return {
                "suggestions": np.array([[b"red sox tickets", b"zzq plumbing"]] * rows),
                "scores": np.array([[0.5, 0.25]] * rows),
            }

    return Suggester(Export(), "made-up export")


def test_the_reports_json_holds_the_list_measures(served, tmp_path, capsys):
    import json
    from argparse import Namespace

    from mtn_keras.evaluate import _print_report, write_completions
    from mtn_keras.model_reports import completions, evaluate_savedmodel

    test = [["red sox", "red sox tickets", "fenway park"], ["weather boston", "google"]]
    args = Namespace(json=tmp_path / "report.json", markdown=None, chart=None)
    report = evaluate_savedmodel(served, "tiny", test, TRAIN, 5, 8, ["u", "v"], 20)
    _print_report("tiny", report, True, args)
    out = capsys.readouterr().out
    written = json.loads(args.json.read_text())
    assert {"grounded", "grounded_ci", "filler", "filler_ci", "pair_kinds", "shown"} <= set(
        written["list_measures"]
    )
    assert set(written["list_measures"]["pair_kinds"]) == {
        "repeat",
        "related-new",
        "unrelated-new",
    }
    assert "new_word_hit@5_ci" in written["list_measures"]["pair_kinds"]["related-new"]
    assert "list_measures" in written["anchors"]["adj"]
    assert {"pairs", "sr@5", "sr@5_ci", "new_word_hit@5", "new_word_hit@5_ci"} == set(
        written["log_anchor"]
    )
    assert "| tiny | 0 / 1 / 2 |" in out and "| log anchor (related-new pairs) |" in out

    prefix = completions(served, "tiny", test, TRAIN, ["u", "v"], (3,), 5, resamples=20)
    assert write_completions(prefix, args) == 0
    written = json.loads(args.json.read_text())
    assert "list_measures" in written["3 characters"]["tiny"]
    assert set(written["log_anchor"]) == {
        "3 characters",
        "first query, 4 characters, empty session",
    }
    assert "| 3 characters | tiny | 0 / 1 / 2 |" in capsys.readouterr().out
