"""The history's two jobs measured apart: repeat and new pairs, the paired difference on new
pairs, and the share of shown history items that relate to nothing in the session."""

import numpy as np
import pytest

from mtn_keras.ranking.rules import log_follows, relates
from mtn_keras.scorecard.anchors import reading_history
from mtn_keras.scorecard.bootstrap import UserResamples
from mtn_keras.scorecard.history_split import (
    paired_difference,
    repeat_mask,
    split_figures,
)
from mtn_keras.scorecard.report import evaluate_suggesters, history_table

PAIRS = [
    (["red sox"], "red sox tickets"),  # typed before: a repeat pair
    (["cheap flights"], "rome hotels"),  # new for the user
    (["cookie recipe"], "sugar cookies"),  # new for the user
]
HISTORIES = [["weather boston", "red sox tickets"], ["weather boston"], ["weather boston"]]


def test_relates_counts_shared_words_follows_and_the_typed_prefix():
    history = ["red sox", "fenway park", "weather boston"]
    assert relates("red sox tickets", ["red sox"])  # a shared word
    assert relates("fenway park", ["red sox"], history)  # came right after it before
    assert not relates("weather boston", ["red sox"], history)
    assert relates("weather boston", ["red sox"], follows={("red sox", "weather boston")})
    assert relates("weather boston", ["red sox"], prefix="wea")
    assert not relates("weather boston", ["red sox"], prefix="fen")


def test_log_follows_holds_later_queries_of_a_session_only():
    follows = log_follows([["a", "b", "c"], ["d"]])
    assert follows == {("a", "b"), ("a", "c"), ("b", "c")}


def test_the_figures_are_split_into_repeat_and_new_pairs():
    repeat = repeat_mask(PAIRS, HISTORIES)
    assert repeat.tolist() == [True, False, False]
    lists = [["red sox tickets"], ["weather boston", "rome hotels"], ["weather boston"]]
    found = split_figures(
        lists, PAIRS, repeat, UserResamples(["u", "v", "w"], 0, 0), HISTORIES, set()
    )
    assert found["repeat"]["sr@5"] == 100.0 and found["repeat"]["pairs"] == 1
    assert found["new"]["sr@5"] == 50.0 and found["new"]["mrr@5"] == 25.0
    # "weather boston" twice, from the history and sharing nothing: 2 of the 4 shown items
    assert found["unrelated_history"] == 50.0


def test_the_paired_difference_counts_new_pairs_only_with_an_interval():
    repeat = repeat_mask(PAIRS, HISTORIES)
    with_history = [["red sox tickets"], ["weather boston"], ["sugar cookies"]]
    without = [[], ["rome hotels"], ["sugar cookies"]]
    resampled = UserResamples(["u", "v", "w"], 200, 0)
    found = paired_difference(with_history, without, PAIRS, ~repeat, resampled)
    assert found["difference"] == pytest.approx(-50.0)
    low, high = found["ci"]
    assert -100.0 <= low <= found["difference"] <= high <= 0.0


def test_evaluate_reports_the_split_and_the_table_shows_it():
    def suggest(contexts, histories):
        return [[(h[-1], 0.5)] for h in histories]

    reading_history(suggest)

    def plain(contexts):
        return [[("rome hotels", 0.5)] for _ in contexts]

    scores = evaluate_suggesters(
        PAIRS,
        {"m": plain, "m + history": suggest},
        progress=False,
        groups=["u", "v", "w"],
        resamples=100,
        histories=HISTORIES,
    )
    split = scores["m + history"]["history_split"]
    assert split["repeat"]["sr@5"] == 100.0 and split["new"]["sr@5"] == 0.0
    assert split["new_difference"]["difference"] == pytest.approx(-50.0)
    assert "new_difference" not in scores["m"]["history_split"]
    table = history_table(scores)
    assert "| m + history | 1 | 100.00" in table and np.isfinite(split["unrelated_history"])
