"""Users' histories kept by `prepare`: each line points at its place in its user's history,
and a pair's history is only what its own user typed before it."""

import pytest
from test_data_prepare import WORDS, prepare_windows, write_log

from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.history import PairHistories, latest, load_history, load_starts
from mtn_keras.data.prepared import load_split, load_users


def prepared(tmp_path):
    """A made-up log of 20 users prepared under `all` (windows of 4), 4 + 4 users held out."""
    return prepare_windows(tmp_path, users=20, held_out=4)


def test_each_line_starts_at_its_sessions_start_in_its_users_history(tmp_path):
    out = prepared(tmp_path)
    histories = load_history(out)
    # per user: sessions of 3, 1 and 6 queries, all in the history, the session of 1 too
    assert {len(queries) for queries in histories.values()} == {10}
    for name in ("train", "valid", "test"):
        lines, users = load_split(out, name), load_users(out, name)
        starts = load_starts(out, name)
        for line, user, start in zip(lines, users, starts):
            assert line[0] in histories[user][start : start + 6]
    # the 6-query session (after 3 + 1 queries) is cut into windows of 4 overlapping by one;
    # both windows start at the session: their history is the earlier sessions only
    assert load_starts(out, "test") == [0, 4, 4] * 4


def written_sessions(user):
    """The sessions `write_log` wrote for `user`, their queries in time order."""
    parts = [(0, 3), (2, 1), (4, 6)]
    return [
        [f"{WORDS[(user + start + k) % 10]} {WORDS[(user * 3 + k) % 10]}" for k in range(count)]
        for start, count in parts
    ]


@pytest.mark.parametrize("size", [5, 3])
def test_a_pairs_history_is_its_own_users_earlier_queries(tmp_path, size):
    """Each test line's history is the latest `size` queries its own user typed in the
    sessions before the line's, as the log was written (a session of one query too)."""
    out = prepared(tmp_path)
    train_users = set(load_users(out, "test")) & set(load_users(out, "train"))
    pairs = PairHistories.load(str(out), "test", size=size)
    lines, users = load_split(out, "test"), load_users(out, "test")
    assert len(pairs) == len(lines) and not train_users
    for i, (line, user) in enumerate(zip(lines, users)):
        sessions = written_sessions(int(user))
        at = next(n for n, session in enumerate(sessions) if line[0] in session)
        earlier = [query for session in sessions[:at] for query in session]
        assert pairs[i] == earlier[-size:], (line, earlier)
    assert {len(pairs[i]) for i in range(len(pairs))} == {0, min(4, size)}


@pytest.mark.parametrize(
    "size, end, expected",
    [(2, None, ["c", "d"]), (9, None, ["a", "b", "c", "d"]), (2, 3, ["b", "c"]), (0, None, [])],
)
def test_latest_is_the_last_entries_before_the_end(size, end, expected):
    assert latest(["a", "b", "c", "d"], size, end) == expected


def test_a_dataset_without_histories_says_none(tmp_path):
    out = tmp_path / "prepared"
    prepare([write_log(tmp_path / "log.txt")], str(out), split=(80, 10, 10), progress=False)
    (out / "history.tsv").unlink()
    assert load_history(out) is None and PairHistories.load(str(out), "test") is None


def test_a_user_missing_from_history_tsv_is_named(tmp_path):
    out = prepared(tmp_path)
    missing = load_users(out, "test")[0]
    rows = (out / "history.tsv").read_text().splitlines(keepends=True)
    (out / "history.tsv").write_text("".join(r for r in rows if r.split("\t")[0] != missing))
    with pytest.raises(
        ValueError, match=f"holds no query of user {missing} \\(test.users line 1\\)"
    ):
        PairHistories.load(str(out), "test")
