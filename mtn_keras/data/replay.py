"""Raw query logs to the lines a model is scored on, as `prepare` makes them: the kept
sessions' protocol lines, each line's user and where it starts in its user's history. One
path for `prepare` (per split) and `evaluate --input` (the whole log)."""

from collections.abc import Callable
from typing import NamedTuple

from mtn_keras.data.evidence import Evidence
from mtn_keras.data.logs import Tally
from mtn_keras.data.sessions import (
    Protocol,
    Session,
    line_starts,
    line_users,
    protocol_lines,
    sessions_from_logs,
)


class Lines(NamedTuple):
    """A protocol's lines (queries oldest first) and, for each, its user and start."""

    lines: list[list[str]]
    users: list[str]
    starts: list[int]


class LogCounts(NamedTuple):
    """What the counting stages make of logs: the rows' tally, the kept sessions, every
    user's (user, time, query) history rows and the clicks' evidence."""

    tally: Tally
    sessions: list[Session]
    history: list[tuple[str, int, str]]
    evidence: Evidence


# Where the counting stages run: (log paths, format, protocol, progress) -> their counts.
Counting = Callable[[list[str], str, Protocol, bool | None], LogCounts]


def count_logs(
    paths: list[str], fmt: str, protocol: Protocol, progress: bool | None = None
) -> LogCounts:
    """The logs' counting stages in this process, as `prepare` runs them by default
    (mtn_keras.cluster runs the same on a Spark cluster)."""
    tally = Tally()
    history: list[tuple[str, int, str]] = []
    evidence = Evidence.of_logs(paths, fmt)
    sessions = sessions_from_logs(paths, fmt, protocol, tally, progress, history, evidence)
    return LogCounts(tally, sessions, history, evidence)


def protocol_view(sessions: list[Session], protocol: Protocol) -> Lines:
    """The lines that `protocol` makes of these kept sessions, with their users and starts."""
    return Lines(
        protocol_lines((s.queries for s in sessions), protocol),
        line_users(sessions, protocol),
        line_starts(sessions, protocol),
    )


def replay_logs(
    paths: list[str], fmt: str, protocol: Protocol, history: bool = False
) -> tuple[Lines, dict[str, list[str]] | None]:
    """The logs' lines under `protocol`, and with `history` each user's queries in time
    order (the histories that the lines' starts point into; None without). As in `prepare`,
    the sessions that seek sexual content involving minors, by their words or by the logs'
    clicks (data/evidence.py), are left out."""
    rows: list[tuple[str, int, str]] | None = [] if history else None
    evidence = Evidence.of_logs(paths, fmt)
    sessions = sessions_from_logs(paths, fmt, protocol, history=rows, evidence=evidence)
    view = protocol_view(sessions, protocol)
    if rows is None:  # no `history` asked
        return view, None
    by_user: dict[str, list[str]] = {}
    for user, _, query in rows:
        by_user.setdefault(user, []).append(query)
    return view, by_user
