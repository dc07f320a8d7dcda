"""`prepare`'s counting stages on Spark: the logs read file by file (a gzip file is one task
on any engine), each user's run of rows sessionized and filtered in parallel by the project's
own functions (data/sessions.py), the clicks' evidence tallied as keyed sums; the same
`LogCounts` as `data.replay.count_logs` makes in one process."""

from functools import partial
from operator import add
from typing import Any

from mtn_keras.data.evidence import ClickTally, Evidence, clicked_queries
from mtn_keras.data.logs import MAX_EXAMPLES, Tally, read_log
from mtn_keras.data.replay import LogCounts
from mtn_keras.data.sessions import Protocol, Session, sessions_of_runs, user_queries

Run = tuple[str, list[tuple[int, str]]]  # a user's run of (time, query) rows
RunKey = tuple[int, int]  # (file number, run number in the file)


def count_logs_on(
    sc: Any, paths: list[str], fmt: str, protocol: Protocol, progress: bool | None = None
) -> LogCounts:
    """The logs' counting stages on the Spark context `sc` (`progress` is not shown)."""
    evidence = log_evidence(sc, paths, fmt)
    files = sc.parallelize(list(enumerate(paths)), len(paths))
    read = files.map(partial(_read_file, fmt=fmt)).cache()
    summaries = sorted(read.map(_summary).collect())
    joins = _joins(summaries)
    runs = read.flatMap(_numbered_runs).map(partial(_join_key, joins=joins))
    whole = runs.groupByKey().mapValues(_joined).sortByKey(numPartitions=sc.defaultParallelism)
    shared = sc.broadcast(evidence)
    parts = whole.mapPartitions(partial(_sessions, protocol=protocol, evidence=shared)).collect()
    read.unpersist()
    tally = _read_tally(summaries, joins)
    sessions: list[Session] = []
    history: list[tuple[str, int, str]] = []
    for kept, rows, counts in parts:
        sessions += kept
        history += rows
        tally.counts.update(counts)
    return LogCounts(tally, sessions, history, evidence)


def _read_file(item: tuple[int, str], fmt: str) -> tuple[int, list[Run], Tally]:
    """One file's runs of rows by user (`user_queries`) and its reading tally."""
    number, path = item
    tally = Tally()
    return number, list(user_queries(read_log(path, fmt, tally, False), tally)), tally


def _summary(read: tuple[int, list[Run], Tally]) -> tuple[int, Tally, list[str], int, int]:
    """(file number, tally, each run's user, the first row's time, the last row's time)."""
    number, runs, tally = read
    first, last = (runs[0][1][0][0], runs[-1][1][-1][0]) if runs else (0, 0)
    return number, tally, [user for user, _ in runs], first, last


def _joins(summaries: list[tuple[int, Tally, list[str], int, int]]) -> dict[RunKey, RunKey]:
    """{a file's first run: the run it continues} where a user's rows go on from one file
    into the next, as one run in a single pass over the files."""
    joins: dict[RunKey, RunKey] = {}
    last: tuple[RunKey, str] | None = None
    for number, _, users, _, _ in summaries:
        if not users:
            continue
        if last is not None and users[0] == last[1]:
            joins[number, 0] = last[0]
        end = (number, len(users) - 1)
        last = (joins.get(end, end), users[-1])
    return joins


def _numbered_runs(read: tuple[int, list[Run], Tally]) -> list[tuple[RunKey, Run]]:
    number, runs, _ = read
    return [((number, i), run) for i, run in enumerate(runs)]


def _join_key(item: tuple[RunKey, Run], joins: dict[RunKey, RunKey]) -> tuple[RunKey, Any]:
    """The run keyed by the run it continues (itself if none), carrying its own key."""
    key, run = item
    return joins.get(key, key), (key, run)


def _joined(pieces: Any) -> Run:
    """One run of the pieces of a user's rows, in file order."""
    ordered = sorted(pieces, key=lambda piece: piece[0])
    return ordered[0][1][0], [row for _, (_, rows) in ordered for row in rows]


def _sessions(runs: Any, protocol: Protocol, evidence: Any) -> Any:
    """The kept sessions, history rows and counts of a partition of whole runs, in order."""
    tally = Tally()
    history: list[tuple[str, int, str]] = []
    kept = sessions_of_runs((run for _, run in runs), protocol, tally, history, evidence.value)
    yield kept, history, tally.counts


def _read_tally(
    summaries: list[tuple[int, Tally, list[str], int, int]], joins: dict[RunKey, RunKey]
) -> Tally:
    """The files' reading tallies added up, with what only the whole log shows: its users in
    order of first appearance, those whose rows come back, and rows out of time order where
    a run goes on into the next file."""
    tally = Tally()
    runs: list[str] = []
    late = 0
    for number, part, users, first, _ in summaries:
        tally.counts.update(part.counts)
        tally.malformed_reasons.update(part.malformed_reasons)
        tally.malformed_examples += part.malformed_examples
        joined = (number, 0) in joins
        runs += users[1:] if joined else users
        late += joined and first < _last_time(summaries, number)
    del tally.malformed_examples[MAX_EXAMPLES:]
    tally.users = list(dict.fromkeys(runs))
    tally.counts["users"] = len(tally.users)
    tally.counts["users_not_contiguous"] = len(runs) - len(tally.users)
    tally.counts["rows_out_of_order"] += late
    return tally


def _last_time(summaries: list[tuple[int, Tally, list[str], int, int]], number: int) -> int:
    """The time of the last row read before file `number`'s rows (a file with runs)."""
    return [last for n, _, users, _, last in summaries if n < number and users][-1]


def log_evidence(sc: Any, paths: list[str], fmt: str) -> Evidence:
    """The clicks' evidence (`Evidence.of_logs`), the clicks tallied file by file and added
    up by key: the adult clicks of every query and host, then every click of the queries
    with enough adult clicks."""
    files = sc.parallelize(paths, len(paths))
    tally = ClickTally()
    for (kind, key), n in files.flatMap(partial(_adult_clicks, fmt=fmt)).reduceByKey(add).collect():
        (tally.adult if kind == "query" else tally.adult_hosts)[key] = n
    if tally.adult:
        adult = sc.broadcast(tally.adult)
        clicks = files.flatMap(partial(_all_clicks, fmt=fmt, adult=adult))
        tally.clicks.update(dict(clicks.reduceByKey(add).collect()))
    return Evidence.of_clicks(tally)


def _adult_clicks(path: str, fmt: str) -> list[tuple[tuple[str, str], int]]:
    part = ClickTally()
    for query, address in clicked_queries([path], fmt):
        part.add_adult(query, address)
    queries = [(("query", query), n) for query, n in part.adult.items()]
    return queries + [(("host", host), n) for host, n in part.adult_hosts.items()]


def _all_clicks(path: str, fmt: str, adult: Any) -> list[tuple[str, int]]:
    part = ClickTally(adult=adult.value)
    for query, _ in clicked_queries([path], fmt):
        part.add(query)
    return list(part.clicks.items())
