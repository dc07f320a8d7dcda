"""Session protocol: sessionize, drop consecutive duplicates, filter, split, and the whole run."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtn_keras.data.logs import Tally
from mtn_keras.data.sessions import (
    Protocol,
    Session,
    drop_consecutive_duplicates,
    filter_reason,
    protocol_lines,
    sessionize,
    sessions_from_logs,
    split_sessions,
    truncate,
    windows,
)

T0 = 1141171200  # 2006-03-01 00:00:00


def stamp(seconds):
    hours, rest = divmod(seconds, 3600)
    return f"2006-03-01 {hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def write_aol(path, rows):
    """rows: (user, query, seconds after midnight)."""
    path.write_text("".join(f"{u}\t{q}\t{stamp(s)}\t\t\n" for u, q, s in rows))
    return str(path)


def test_data_sessionize_cuts_after_more_than_the_gap():
    timed = [(0, "a"), (1800, "b"), (3601, "c"), (3700, "d")]
    assert sessionize(timed, 1800) == [[(0, "a"), (1800, "b")], [(3601, "c"), (3700, "d")]]


def test_data_sessionize_sorts_out_of_order_times():
    assert sessionize([(50, "b"), (10, "a"), (50, "c")], 1800) == [
        [(10, "a"), (50, "b"), (50, "c")]
    ]


@given(
    st.lists(st.tuples(st.integers(0, 20_000), st.sampled_from(["a", "b", "c"]))),
    st.integers(0, 3_000),
)
def test_data_sessionize_keeps_every_query_in_order_within_the_gap(timed, gap):
    sessions = sessionize(timed, gap)
    flat = [item for session in sessions for item in session]
    assert flat == sorted(timed, key=lambda item: item[0])  # none lost, duplicated or reordered
    for session in sessions:
        assert session and all(b[0] - a[0] <= gap for a, b in zip(session, session[1:]))
    assert all(b[0][0] - a[-1][0] > gap for a, b in zip(sessions, sessions[1:]))


def test_data_drop_consecutive_duplicates():
    timed = list(enumerate(["a", "a", "b", "a", "a"]))
    assert drop_consecutive_duplicates(timed) == [(0, "a"), (2, "b"), (3, "a")]
    assert drop_consecutive_duplicates([]) == []


def test_data_filter_reasons():
    protocol = Protocol(min_queries=2, max_queries=3, max_query_tokens=2)
    assert filter_reason(["a"], protocol) == "too_short"
    assert filter_reason(["a", "b", "c", "d"], protocol) == "too_long"
    assert filter_reason(["a", "b c d"], protocol) == "long_query"
    assert filter_reason(["a b", "c"], protocol) is None


def test_data_split_is_seeded_and_sized():
    sessions = [Session(f"u{i % 7}", [f"q{i}", "x"]) for i in range(200)]
    splits = split_sessions(sessions, (90, 5, 5), "session", seed=3)
    assert [len(splits[name]) for name in ("train", "valid", "test")] == [180, 10, 10]
    assert splits == split_sessions(sessions, (0.9, 0.05, 0.05), "session", seed=3)
    assert splits != split_sessions(sessions, (90, 5, 5), "session", seed=4)
    assert sorted(s.queries[0] for split in splits.values() for s in split) == sorted(
        s.queries[0] for s in sessions
    )
    assert splits["train"] == [s for s in sessions if s in splits["train"]]  # input order kept


def test_data_split_by_user_keeps_users_apart():
    sessions = [Session(f"u{i % 40}", [f"q{i}", "x"]) for i in range(400)]
    splits = split_sessions(sessions, (80, 10, 10), "user", seed=0)
    users = {name: {s.user for s in split} for name, split in splits.items()}
    assert [len(users[name]) for name in ("train", "valid", "test")] == [32, 4, 4]
    assert not (
        users["train"] & users["valid"]
        or users["train"] & users["test"]
        or users["valid"] & users["test"]
    )


def test_data_split_by_user_counts_takes_users_with_sessions():
    """The asked users with sessions go to valid and test; users without sessions to train."""
    sessions = [Session(f"u{i % 40}", [f"q{i}", "x"]) for i in range(400)]
    log_users = [f"u{i}" for i in range(60)]  # u40..u59 kept no session
    for seed in range(5):
        splits = split_sessions(sessions, by="user", seed=seed, users=log_users, user_counts=(9, 6))
        users = {name: {s.user for s in split} for name, split in splits.items()}
        assert [len(users[name]) for name in ("train", "valid", "test")] == [25, 9, 6]
        assert not (users["train"] & users["valid"] or users["valid"] & users["test"])
        assert not users["train"] & users["test"]
    assert splits == split_sessions(
        sessions, by="user", seed=4, users=log_users, user_counts=(9, 6)
    )
    with pytest.raises(ValueError, match="leave no training user"):
        split_sessions(sessions, by="user", users=log_users, user_counts=(20, 20))


def test_data_sessions_from_logs_accounts_for_every_row(tmp_path):
    path = write_aol(
        tmp_path / "log.txt",
        [
            ("1", "red bikes", 0),
            ("1", "Red  Bikes!", 10),  # consecutive duplicate once normalised
            ("1", "blue bikes", 20),
            ("1", "green bikes", 30),
            ("1", "kites", 5000),  # more than 30 minutes later: a session of one, too short
            ("2", "---", 0),  # empty once normalised
            ("2", "tents", 100),
            ("2", "a b c d e f g h i j k", 200),  # 11 tokens: the session goes
            ("2", "tents", 300),
            ("3", "one", 0),
            ("3", "two", 1),
            ("3", "three", 2),
            ("3", "four", 3),
            ("3", "five", 4),
            ("3", "six", 5),  # 6 queries: too long
        ],
    )
    tally = Tally()
    sessions = sessions_from_logs([path, path], "aol", Protocol(), tally)
    assert sessions == [Session("1", ["red bikes", "blue bikes", "green bikes"])] * 2
    counts = tally.counts
    assert counts["rows_read"] == 30 and counts["empty_query"] == 2
    assert counts["consecutive_duplicate"] == 2 and counts["users_not_contiguous"] == 3
    assert (
        counts["session_too_short"],
        counts["session_too_long"],
        counts["session_long_query"],
    ) == (2, 12, 6)
    assert (
        counts["sessions_too_short"],
        counts["sessions_too_long"],
        counts["sessions_long_query"],
    ) == (2, 2, 2)
    dropped = sum(
        counts[k]
        for k in (
            "empty_query",
            "consecutive_duplicate",
            "session_too_short",
            "session_too_long",
            "session_long_query",
        )
    )
    assert counts["rows_read"] == counts["rows_malformed"] + dropped + counts["queries_kept"]


def test_data_out_of_order_rows_are_sorted_and_counted(tmp_path):
    path = write_aol(
        tmp_path / "log.txt", [("1", "blue", 20), ("1", "red", 10), ("1", "green", 30)]
    )
    tally = Tally()
    assert sessions_from_logs([path], tally=tally) == [Session("1", ["red", "blue", "green"])]
    assert tally.counts["rows_out_of_order"] == 1


def test_data_windows_overlap_by_one_query():
    queries = [f"q{i}" for i in range(8)]
    assert windows(queries, 5) == [queries[0:5], queries[4:8]]
    assert windows(queries[:5], 5) == [queries[:5]]
    assert windows(queries[:6], 5) == [queries[:5], queries[4:6]]
    assert windows(queries[:4], 2) == [queries[0:2], queries[1:3], queries[2:4]]


@given(
    st.lists(st.lists(st.integers(0, 9), min_size=2, max_size=30), min_size=1, max_size=20),
    st.integers(2, 7),
)
def test_data_all_protocol_makes_every_later_query_a_target_once(sessions, max_queries):
    """Each (session, position >= 1) is a target once, after its own session's queries only."""
    named = [[f"s{i}q{j}w{w}" for j, w in enumerate(session)] for i, session in enumerate(sessions)]
    lines = protocol_lines(named, Protocol.named("all", max_queries=max_queries))
    targets = [(line[: t + 1], line[t + 1]) for line in lines for t in range(len(line) - 1)]
    expected = [q for session in named for q in session[1:]]
    assert sorted(target for _, target in targets) == sorted(expected)
    for context, target in targets:
        assert 1 <= len(context) <= max_queries - 1
        session = next(s for s in named if target in s)
        position = session.index(target)
        assert context == session[position - len(context) : position]  # never crosses a session
    assert all(2 <= len(line) <= max_queries for line in lines)


def test_data_all_protocol_truncates_long_queries_and_keeps_long_sessions(tmp_path):
    words = " ".join(f"w{i}" for i in range(12))
    rows = [("1", words, 0), ("1", "red", 60)] + [("2", f"q{i}", 60 * i) for i in range(7)]
    rows += [("3", "alone", 0)]
    tally = Tally()
    protocol = Protocol.named("all")
    kept = sessions_from_logs([write_aol(tmp_path / "log.txt", rows)], "aol", protocol, tally)
    assert kept == [
        Session("1", [truncate(words, 10), "red"]),
        Session("2", [f"q{i}" for i in range(7)]),
    ]
    assert truncate(words, 10).split() == words.split()[:10] and truncate("a b", 10) == "a b"
    assert tally.counts["queries_truncated"] == 1 and tally.counts["session_too_short"] == 1
    assert tally.users == ["1", "2", "3"]
    paper = sessions_from_logs([write_aol(tmp_path / "log.txt", rows)], "aol", Protocol())
    assert paper == []
