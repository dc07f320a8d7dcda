"""Session protocols: sessionize per user, drop consecutive duplicates, filter, split, window.

Two protocols. `paper` keeps sessions of 3..5 queries whose queries all have at most 10
tokens (the paper's Table 1). `all` keeps every session of 2+ queries, cuts over-long
queries to `max_query_tokens` words, and cuts a session longer than `max_queries` into
windows (`windows`) after the split, so every query after the first is a target once.
`sessions_from_logs` runs the protocol up to the split on log files (used by `prepare` and
by evaluation on raw logs); `protocol_lines` turns kept sessions into the lines trained on.
Rows are expected grouped by user, as the AOL and Excite logs are; within a user,
rows out of time order are sorted (stable) and counted, not dropped. A user whose rows come
back after another user's is sessionized again from there and counted as not contiguous.
"""

import math
import random
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Iterator, NamedTuple

from mtn_keras.data.logs import Row, Tally, read_log
from mtn_keras.data.safety import child_unsafe
from mtn_keras.data.text import normalise

if TYPE_CHECKING:
    from mtn_keras.data.evidence import Evidence

SPLITS = ("train", "valid", "test")
PROTOCOLS = ("paper", "all")
SESSION_GAP_SECONDS = 30 * 60  # a session ends after this long without a query (the paper's)
Unit = int | str  # what a split shuffles: a session's index (by session) or a user (by user)


@dataclass(frozen=True)
class Protocol:
    """How logged queries become sessions; the defaults are the paper's.

    `name` is `paper` (sessions outside min..max queries, or with a query of more than
    `max_query_tokens` tokens, are dropped) or `all` (sessions of fewer than `min_queries`
    are dropped; longer ones are windowed, longer queries truncated).
    """

    gap_minutes: float = SESSION_GAP_SECONDS // 60
    min_queries: int = 3
    max_queries: int = 5
    max_query_tokens: int = 10
    name: str = "paper"

    def __post_init__(self) -> None:
        """Refuses settings under which no session could be kept."""
        if self.name not in PROTOCOLS:
            raise ValueError(f"protocol {self.name!r}: expected one of {', '.join(PROTOCOLS)}")
        if not 0 <= self.gap_minutes < math.inf:
            raise ValueError(f"gap_minutes must be a finite number >= 0, not {self.gap_minutes}")
        if self.min_queries < 2 or self.max_query_tokens < 1:
            raise ValueError(
                "min_queries must be >= 2 (a session of one query has no pair to "
                "train on) and max_query_tokens >= 1"
            )
        if self.name == "all" and min(self.min_queries, self.max_queries) < 2:
            raise ValueError(
                "protocol all: min_queries and max_queries must be >= 2 "
                "(a session or window of one query has no pair)"
            )
        if self.name == "paper" and self.max_queries < self.min_queries:
            raise ValueError(
                f"max_queries {self.max_queries} is below min_queries {self.min_queries}"
            )

    @classmethod
    def named(cls, name: str = "paper", **fields: Any) -> "Protocol":
        """The protocol `name` with its own default min_queries (3 for paper, 2 for all)."""
        fields.setdefault("min_queries", 3 if name == "paper" else 2)
        return cls(name=name, **fields)


class Session(NamedTuple):
    """A user's session: normalised queries, oldest first; `start`: how many of the user's
    queries (of every session, kept or not) came before it, its place in their history."""

    user: str
    queries: list[str]
    start: int = 0


def sessionize(timed: list[tuple[int, str]], gap_seconds: float) -> list[list[tuple[int, str]]]:
    """One user's (time, query) pairs, sorted by time, cut wherever more than `gap_seconds` pass."""
    sessions: list[list[tuple[int, str]]] = []
    last = None
    for item in sorted(timed, key=itemgetter(0)):
        if last is not None and item[0] - last <= gap_seconds:
            sessions[-1].append(item)
        else:
            sessions.append([item])
        last = item[0]
    return sessions


def drop_consecutive_duplicates(timed: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(time, query) pairs without those whose query equals the one just before."""
    return [item for i, item in enumerate(timed) if i == 0 or item[1] != timed[i - 1][1]]


def truncate(query: str, max_tokens: int) -> str:
    """The query's first `max_tokens` words."""
    return query if query.count(" ") < max_tokens else " ".join(query.split(" ")[:max_tokens])


def windows(queries: list[str], max_queries: int) -> list[list[str]]:
    """The session cut into windows of at most `max_queries` queries, overlapping by one.

    Window w holds queries w*(m-1) .. w*(m-1)+m-1 (m = max_queries): each query after the
    first is a target in exactly one window, after up to m-1 queries of its own session.
    """
    step = max_queries - 1
    return [queries[start : start + max_queries] for start in range(0, len(queries) - 1, step)]


def protocol_lines(sessions: Iterable[list[str]], protocol: Protocol) -> list[list[str]]:
    """The query lists trained and evaluated on: the sessions, windowed under `all`."""
    if protocol.name == "paper":
        return [list(queries) for queries in sessions]
    return [w for queries in sessions for w in windows(queries, protocol.max_queries)]


def filter_reason(queries: list[str], protocol: Protocol) -> str | None:
    """Why the protocol drops this session (`too_short`, `too_long`, `long_query`), else None."""
    if len(queries) < protocol.min_queries:
        return "too_short"
    if protocol.name == "all":
        return None
    if len(queries) > protocol.max_queries:
        return "too_long"
    if any(query.count(" ") >= protocol.max_query_tokens for query in queries):
        return "long_query"
    return None


def split_sessions(
    sessions: list[Session],
    fractions: tuple[float, float, float] = (95, 2.5, 2.5),
    by: str = "session",
    seed: int = 0,
    users: list[str] | None = None,
    user_counts: tuple[int, int] | None = None,
) -> dict[str, list[Session]]:
    """Seeded random train/valid/test split by session or by user, each split in input order.

    `fractions` are relative (95/2.5/2.5 or 0.95/0.025/0.025); by `user`, they count the
    `users` (default: those of the sessions). `prepare` passes every user of the log, so
    that a user falls in the same split under any protocol: `paper` and `all` data of one
    log and seed have the same unseen users.

    `user_counts` (valid, test), by `user` only, replaces `fractions`: walking the same
    shuffled users, the first `valid` users that have sessions go to valid, the next `test`
    to test, the rest to train, so that each evaluation split has exactly that many users
    with pairs to score. Which users have sessions depends on the protocol, so under counts
    the two protocols' splits may differ. Raises ValueError if no user with sessions is
    left for train.
    """
    units: list[Unit]
    if by == "session":
        units = list(range(len(sessions)))
    elif by == "user":
        units = (
            list(users)
            if users is not None
            else list(dict.fromkeys(session.user for session in sessions))
        )
    else:
        raise ValueError(f"split by {by!r}: expected 'session' or 'user'")
    random.Random(seed).shuffle(units)
    if user_counts is not None:
        if by != "user":
            raise ValueError("user counts split by user, not by session")
        split_of = _split_by_counts(units, {session.user for session in sessions}, user_counts)
    else:
        total = sum(fractions)
        n_train = round(len(units) * fractions[0] / total)
        n_valid = round(len(units) * fractions[1] / total)
        cuts = (n_train, n_train + n_valid)
        split_of = {unit: SPLITS[(i >= cuts[0]) + (i >= cuts[1])] for i, unit in enumerate(units)}
    splits: dict[str, list[Session]] = {name: [] for name in SPLITS}
    for i, session in enumerate(sessions):
        splits[split_of[i if by == "session" else session.user]].append(session)
    return splits


def _split_by_counts(
    shuffled: list[Unit], with_sessions: set[str], counts: tuple[int, int]
) -> dict[Unit, str]:
    """Each user's split: the first counts[0] users with sessions to valid, the next
    counts[1] to test, every other user to train."""
    valid, test = counts
    if valid + test >= len(with_sessions):
        raise ValueError(
            f"{valid} validation and {test} test users leave no training user: "
            f"{len(with_sessions):,} users have sessions"
        )
    split_of: dict[Unit, str] = {}
    taken = 0
    for user in shuffled:
        if user in with_sessions and taken < valid + test:
            split_of[user] = "valid" if taken < valid else "test"
            taken += 1
        else:
            split_of[user] = "train"
    return split_of


def line_users(sessions: list[Session], protocol: Protocol) -> list[str]:
    """The user of each line that `protocol_lines` makes of these sessions, in its order."""
    return [s.user for s in sessions for _ in protocol_lines([s.queries], protocol)]


def line_starts(sessions: list[Session], protocol: Protocol) -> list[int]:
    """Where each line of `protocol_lines` has its history end in its user's history: its
    session's start (Session.start), for every window of a long session too, so that a
    history is the user's earlier sessions only, as the app sends it (never earlier queries
    of the same session)."""
    return [s.start for s in sessions for _ in protocol_lines([s.queries], protocol)]


def user_queries(rows: Iterable[Row], tally: Tally) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """(user, [(time, normalised query)]) per run of rows of one user; empty queries dropped."""
    seen: set[str] = set()
    user: str | None = None
    timed: list[tuple[int, str]] = []
    last_raw, last_query = None, ""
    empty = out_of_order = 0
    for row_user, raw, time, _, _ in rows:
        if raw != last_raw:
            last_raw, last_query = raw, normalise(raw)
        if not last_query:
            empty += 1
            continue
        if row_user != user:
            if timed:
                assert user is not None  # the user of the rows in `timed`
                yield user, timed
            user, timed = row_user, []
            if user in seen:
                tally.counts["users_not_contiguous"] += 1
            else:
                tally.users.append(user)
            seen.add(user)
        elif time < timed[-1][0]:
            out_of_order += 1
        timed.append((time, last_query))
    if timed:
        assert user is not None  # as above
        yield user, timed
    tally.counts["empty_query"] += empty
    tally.counts["rows_out_of_order"] += out_of_order
    tally.counts["users"] += len(seen)


def sessions_from_logs(
    paths: list[str],
    fmt: str = "aol",
    protocol: Protocol = Protocol(),
    tally: Tally | None = None,
    progress: bool | None = None,
    history: list[tuple[str, int, str]] | None = None,
    evidence: "Evidence | None" = None,
) -> list[Session]:
    """The kept sessions of the logs, in log order, under `protocol`; counts go to `tally`.

    A session holding a query that seeks sexual content involving minors (data.safety) is
    dropped whole, before anything else, and counted as `child_unsafe`: its queries are
    neither trained on, nor indexed, nor anyone's history. With the log's `evidence`
    (data.evidence), so is a session holding a query that the evidence calls explicit beside
    a word for a minor. Under `all`, queries are truncated
    to `max_query_tokens` words before consecutive duplicates are dropped (counted as
    `queries_truncated`), and long sessions are kept whole. `history`, a list, gets (user,
    time, query) of every query of every other session, kept or dropped, in the same form:
    the users' histories, which `Session.start` points into.
    """
    tally = Tally() if tally is None else tally
    rows = chain.from_iterable(read_log(path, fmt, tally, progress) for path in paths)
    return sessions_of_runs(user_queries(rows, tally), protocol, tally, history, evidence)


def sessions_of_runs(
    runs: Iterable[tuple[str, list[tuple[int, str]]]],
    protocol: Protocol,
    tally: Tally,
    history: list[tuple[str, int, str]] | None = None,
    evidence: "Evidence | None" = None,
) -> list[Session]:
    """The kept sessions of runs of one user's (time, query) rows (`user_queries`), in order:
    `sessions_from_logs` after the reading, so that a log read in parts gives the same."""
    gap = protocol.gap_minutes * 60
    dropped: Counter[str] = Counter()
    duplicates = truncated = 0
    cut = protocol.name == "all"
    kept: list[Session] = []
    unsafe = child_unsafe if evidence is None else evidence.child_unsafe
    for user, timed in runs:
        seen = 0  # the user's queries so far
        for session in sessionize(timed, gap):
            if any(unsafe(query) for _, query in session):
                dropped["session_child_unsafe"] += len(session)
                dropped["sessions_child_unsafe"] += 1
                continue
            if cut:
                short = [(t, truncate(query, protocol.max_query_tokens)) for t, query in session]
                truncated += sum(a[1] != b[1] for a, b in zip(session, short))
                session = short
            timed_queries = drop_consecutive_duplicates(session)
            duplicates += len(session) - len(timed_queries)
            queries = [query for _, query in timed_queries]
            reason = filter_reason(queries, protocol)
            if reason:
                dropped["session_" + reason] += len(queries)
                dropped["sessions_" + reason] += 1
            else:
                kept.append(Session(user, queries, seen))
            if history is not None:
                history.extend((user, t, query) for t, query in timed_queries)
            seen += len(queries)
    tally.counts.update(dropped)
    tally.counts["consecutive_duplicate"] += duplicates
    tally.counts["queries_truncated"] += truncated
    tally.counts["sessions_kept"] += len(kept)
    tally.counts["queries_kept"] += sum(len(session.queries) for session in kept)
    return kept
