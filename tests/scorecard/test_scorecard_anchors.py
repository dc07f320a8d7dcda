"""The copy-last and adj anchors on a tiny made-up training set."""

from mtn_keras.scorecard import Adj, CopyLast, batched

TRAIN = [
    ["apple pie", "apple pie recipe", "easy apple pie recipe"],
    ["apple pie", "apple pie recipe"],
    ["apple pie", "pumpkin pie"],
    ["pumpkin pie", "apple pie recipe"],
    ["weather", "weather today"],
]
# Next-query counts: "apple pie recipe" 3, then 1 each (ties alphabetical):
# "easy apple pie recipe", "pumpkin pie", "weather today".


def texts(suggestions):
    return [text for text, _ in suggestions]


def test_copy_last():
    assert CopyLast().suggest(["old query", "new query"], 5) == [("new query", 1.0)]
    assert CopyLast().suggest([], 5) == []


def test_adj_followers_first_then_popular_backoff():
    adj = Adj().fit(TRAIN)
    got = adj.suggest(["weather", "apple pie"], 5)
    # Only four distinct other queries exist, so four suggestions.
    assert texts(got) == [
        "apple pie recipe",
        "pumpkin pie",
        "easy apple pie recipe",
        "weather today",
    ]
    scores = [score for _, score in got]
    assert scores == sorted(scores, reverse=True)
    assert scores[1] >= 1.0 > scores[2]


def test_adj_top1_is_most_frequent_follower():
    adj = Adj().fit(TRAIN)
    assert texts(adj.suggest(["apple pie recipe"], 1)) == ["easy apple pie recipe"]
    assert texts(adj.suggest(["pumpkin pie"], 2)) == ["apple pie recipe", "easy apple pie recipe"]


def test_adj_copies_last_without_followers_and_never_repeats_it():
    adj = Adj().fit(TRAIN)
    assert texts(adj.suggest(["never seen query"], 3)) == [
        "never seen query",
        "apple pie recipe",
        "easy apple pie recipe",
    ]
    # Seen only as a follower: no followers of its own, so copy-last, then not again.
    got = texts(adj.suggest(["weather today"], 5))
    assert got[0] == "weather today" and got.count("weather today") == 1
    assert "apple pie" not in texts(adj.suggest(["apple pie"], 5))


def test_batched_suggester():
    suggest = batched(Adj().fit(TRAIN), k=2)
    assert [texts(s) for s in suggest([["apple pie"], ["weather"]])] == [
        ["apple pie recipe", "pumpkin pie"],
        ["weather today", "apple pie recipe"],
    ]
