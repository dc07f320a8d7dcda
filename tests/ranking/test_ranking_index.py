"""The query-log index: counts, followers, later queries, neighbours, word lists, files."""

import numpy as np
import pytest

from mtn_keras.ranking.log_index import QueryLogIndex

SESSIONS = [
    ["cheap flights", "cheap flights rome", "rome hotels"],
    ["cheap flights", "cheap flights rome", "rome rome hotels"],
    ["cheap flights", "nude beach", "rome hotels"],
    ["weather", "cheap flights"],
]


@pytest.fixture
def index():
    return QueryLogIndex.build(SESSIONS, blocked=["nude"])


def test_counts_and_pairs(index):
    assert index.queries[0] == "cheap flights"
    counts = dict(zip(index.queries, index.counts))
    assert counts["cheap flights"] == 4 and counts["rome hotels"] == 2
    assert index.follow_count("cheap flights", "cheap flights rome") == 2
    assert index.follow_count("cheap flights", "rome hotels") == 0
    assert index.later_count("cheap flights", "rome hotels") == 2  # sessions 1 and 3
    assert index.later_count("rome hotels", "cheap flights") == 0  # order matters
    totals = dict(zip(index.queries, index.follow_totals))
    assert totals["cheap flights"] == 3


def test_neighbours_are_followers_then_later_queries_never_blocked_or_repeating(index):
    assert index.neighbours_of("cheap flights") == ["cheap flights rome", "rome hotels"]
    assert index.neighbours_of("weather") == ["cheap flights"]
    assert index.neighbours_of("never typed") == []
    holding_rome = index.word_queries[
        index.word_splits[index.words.index("rome")] : index.word_splits[
            index.words.index("rome") + 1
        ]
    ]
    assert [index.queries[i] for i in holding_rome] == ["cheap flights rome", "rome hotels"]


def test_a_pair_is_shared_when_two_people_made_it_not_one_however_often():
    sessions = [["bank of america", "big soccer"]] * 3 + [["bank of america", "capital one"]] * 2
    users = ["a", "a", "a", "b", "c"]
    index = QueryLogIndex.build(sessions, users=users)
    assert index.shared("bank of america", "capital one")
    assert not index.shared("bank of america", "big soccer")  # one searcher's habit
    assert not index.shared("capital one", "bank of america")  # order matters
    assert QueryLogIndex.build(sessions).shared("bank of america", "big soccer")  # no users
    with pytest.raises(ValueError, match="4 users for 5 sessions"):
        QueryLogIndex.build(sessions, users=users[:4])


def test_save_and_load(index, tmp_path):
    index.save(tmp_path / "ranking")
    loaded = QueryLogIndex.load(tmp_path / "ranking")
    assert loaded.queries == index.queries and loaded.words == index.words
    assert loaded.neighbours_of("cheap flights") == index.neighbours_of("cheap flights")
    assert loaded.sizes() == index.sizes()
    assert loaded.shared_keys.tolist() == index.shared_keys.tolist()
    (tmp_path / "ranking" / "queries.txt").write_text("only one\n")
    with pytest.raises(ValueError, match="differ in length"):
        QueryLogIndex.load(tmp_path / "ranking")
    arrays = dict(np.load(tmp_path / "ranking" / "index.npz"))
    del arrays["shared_keys"]
    np.savez(tmp_path / "ranking" / "index.npz", **arrays)
    with pytest.raises(ValueError, match="run `rank` again"):
        QueryLogIndex.load(tmp_path / "ranking")


def test_the_ranking_command_indexes_the_training_split_only(ranked, prepared_data):
    from mtn_keras.data.prepared import load_split

    train = {q for s in load_split(prepared_data, "train") for q in s}
    assert set(ranked.ranking.index.queries) == train
    info = ranked.ranking.info
    assert info["fitted_on"]["pairs"] > 0 and info["features"][0] == "model_score"
    assert 0.0 <= ranked.ranking.threshold <= 1.0
