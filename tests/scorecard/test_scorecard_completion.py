"""`evaluate --prefix`: the MPC anchor, the cases and the report, on hand-made sessions."""

import pytest

from mtn_keras.scorecard.completion import completion_cases, completion_report, completion_table
from mtn_keras.scorecard.completion_anchors import HistoryThenMPC, MostPopularCompletion

TRAIN = [
    ["hotel deals", "hotel deals", "hotels rome"],
    ["hotel deals", "hot dogs", "hotels rome"],
    ["hotel", "holiday inn", "hot dogs"],
]
TEST = [["cheap flights", "hotel deals", "hot dogs"], ["hotels rome", "holiday inn"]]


def test_mpc_is_the_most_frequent_first_by_characters_ties_by_text():
    mpc = MostPopularCompletion().fit(TRAIN)
    assert mpc.complete("hot") == ["hotel deals", "hot dogs", "hotels rome", "hotel"]
    assert mpc.complete("hot", k=2) == ["hotel deals", "hot dogs"]
    assert mpc.complete("hotel ") == ["hotel deals", "hotel"]  # a finished word stands whole
    assert mpc.complete("hot", exclude={"hotel deals"})[0] == "hot dogs"
    assert mpc.complete("zz") == [] and mpc.complete("") == []


def test_the_cases_type_the_next_querys_first_characters_and_first_queries():
    cases = completion_cases(TEST, users=["u1", "u2"], chars=(2, 4))
    pairs, prefixes, units, histories = cases["4 characters"]
    assert prefixes == ["hote", "hot ", "holi"] and units == ["u1", "u1", "u2"]
    assert histories is None
    firsts = cases["first query, 4 characters, empty session"]
    assert firsts == (
        [([], "cheap flights"), ([], "hotels rome")],
        ["chea", "hote"],
        ["u1", "u2"],
        None,
    )


def test_with_histories_each_case_row_carries_its_sessions_history():
    earlier = [["rome trip"], ["rome trip", "cheap flights", "hotel deals", "hot dogs"]]
    cases = completion_cases(TEST, users=["u1", "u1"], chars=(2,), histories=earlier)
    assert cases["2 characters"][3] == [earlier[0], earlier[0], earlier[1]]
    assert cases["first query, 4 characters, empty session"][3] == earlier


def test_history_then_mpc_offers_the_users_own_completions_first():
    own = HistoryThenMPC(MostPopularCompletion().fit(TRAIN))
    history = ["hot tubs", "hotmail", "hot tubs", "holiday inn", "hotmail", "hot tubs"]
    # most often typed first (ties latest first), then MPC's, each once
    assert own.complete("hot", history) == [
        "hot tubs",
        "hotmail",
        "hotel deals",
        "hot dogs",
        "hotels rome",
    ]
    assert own.complete("hot ", history, k=2) == ["hot tubs", "hot dogs"]  # a word stands whole
    assert own.complete("ho", []) == MostPopularCompletion().fit(TRAIN).complete("ho")
    assert own.complete("", history) == []


def test_the_report_scores_the_model_beside_both_mpc_rows_on_the_same_pairs():
    def complete(contexts, prefixes):  # a made-up model: always "hot dogs" where it fits
        return [["hot dogs"] if "hot dogs".startswith(p) else [] for p in prefixes]

    report = completion_report(complete, "toy", TEST, TRAIN, chars=(2,), resamples=50)
    two = report["2 characters"]
    assert set(two) == {"toy", "MPC", "MPC without the session's queries"}
    assert two["toy"]["pairs"] == 3 and abs(two["toy"]["sr@5"] - 100 / 3) < 1e-9
    # MPC of "ho": hotel deals, hot dogs, hotels rome, holiday inn (ties by text), hotel
    assert abs(two["MPC"]["mrr@5"] - 100 * (1 + 1 / 2 + 1 / 4) / 3) < 1e-9
    # without the session's queries, "hotel deals" is gone after it was searched
    assert two["MPC without the session's queries"]["mrr@5"] > two["MPC"]["mrr@5"]
    low, high = two["toy"]["sr@5_ci"]
    assert 0 <= low <= two["toy"]["sr@5"] <= high <= 100
    assert report["first query, 4 characters, empty session"]["MPC"]["sr@5"] == 50.0
    assert "| 2 characters | toy | 3 | 33.33 [" in completion_table(report)


def test_with_histories_the_report_adds_the_model_with_history_and_its_anchor():
    earlier = [["hot tubs"], ["hotels rome", "holiday inn"]]
    seen = []

    def complete(contexts, prefixes):
        return [[] for _ in prefixes]

    def with_history(contexts, prefixes, histories):  # a made-up model: the user's own only
        seen.extend(histories)
        return [[q for q in h if q.startswith(p)] for p, h in zip(prefixes, histories)]

    report = completion_report(
        complete,
        "toy",
        TEST,
        TRAIN,
        chars=(2,),
        resamples=0,
        histories=earlier,
        complete_with_history=with_history,
    )
    two = report["2 characters"]
    assert set(two) == {
        "toy",
        "toy + history",
        "MPC",
        "MPC without the session's queries",
        "history then MPC",
    }
    assert abs(two["toy + history"]["sr@5"] - 100 / 3) < 1e-9  # holiday inn, typed before
    assert two["toy"]["sr@5"] == 0.0
    first = report["first query, 4 characters, empty session"]
    assert first["toy + history"]["sr@5"] == 50.0  # hotels rome
    assert seen == [earlier[0], earlier[0], earlier[1], earlier[0], earlier[1]]
    # every row split into repeat pairs (typed before: holiday inn) and new ones
    split = two["toy + history"]["history_split"]
    assert split["repeat"] == {**split["repeat"], "pairs": 1, "sr@5": 100.0}
    assert split["new"]["sr@5"] == 0.0 and split["new_difference"]["difference"] == 0.0
    assert split["unrelated_history"] == 0.0  # what starts with the typed prefix relates
    table = completion_table(report)
    assert "SR@5 repeat" in table and "| 2 characters | toy + history | 3 | 33.33" in table


def test_a_prefix_no_next_query_is_longer_than_is_refused():
    with pytest.raises(ValueError) as refused:
        completion_cases(TEST, chars=(2, 1000))
    assert str(refused.value).startswith("--prefix 1000: no next query is longer than 11 ")


def test_histories_without_a_model_that_reads_them_are_refused_by_name():
    def complete(contexts, prefixes):
        return [[] for _ in prefixes]

    with pytest.raises(ValueError, match="need a complete_with_history"):
        completion_report(complete, "toy", TEST, TRAIN, chars=(2,), histories=[[]] * len(TEST))
