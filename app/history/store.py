"""The searcher's own history: every submitted query with its time, in a private SQLite file.

The store is the person's: it lives in the platform's user-data folder, 0600 in a 0700 folder,
deletes overwrite the deleted text (secure_delete), and a query is never dropped: when the file
is locked, even from the start, it waits in memory and is written later. Which file is
opened, and how, is opening.py's.
"""

from __future__ import annotations

import math
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mtn_keras.data.sessions import SESSION_GAP_SECONDS
from mtn_keras.data.text import normalise

from .schema import MIGRATIONS as MIGRATIONS  # re-exported: the schema the store is at
from .schema import VERSION as VERSION
from .schema import StoreError, connect, failure, is_locked

BUSY_MS = 200  # how long a write waits for a locked store before keeping the query in memory
OPEN_WAIT_S = 5  # how long opening waits for another instance that is migrating the store
MAX_QUERY_CHARS = 512  # a longer entry is cut: no stored text may slow a keystroke's call
ONE_LINE = str.maketrans("\t\r\n", "   ")  # what no line of an export or a log can hold


class StoreLocked(StoreError):
    """A store another program holds locked since before this one connected to it."""


@dataclass(frozen=True)
class Entry:
    """One stored query: its row id, its text as typed and its time (seconds since 1970)."""

    id: int
    query: str
    time: float


class HistoryStore:
    """One person's stored queries. Open with `open_store` (opening.py), which also copes
    with damage.

    A read-only store (`read_only`) is read; this run's queries stay in memory, unwritten. A
    store that another program held locked when it was opened (`connect` False) is connected
    to at its first use once the lock is gone; its queries wait in memory until then.
    """

    def __init__(self, path: Path, read_only: bool = False, connect: bool = True):
        self.path, self.read_only = path, read_only
        self._db: sqlite3.Connection | None = None
        if connect:
            self._connection(wait=True)
        self.pending: list[tuple[str, float]] = []  # queries a locked store could not take yet
        self.failure = "stayed locked"  # why `pending` is not written, for the closing line
        # (data version, size, before, stored queries newest first) of the latest `recent`
        self._recent: tuple[int, int, float, tuple[str, ...]] | None = None

    def close(self) -> bool:
        """Write what waits in memory (`flush(wait=True)`) and close the file; False if queries
        were left unwritten (still in `pending`). A read-only store keeps nothing of this run:
        that was said when it opened."""
        if self.read_only:
            self.pending.clear()
        written = self.flush(wait=True)
        if self._db is not None:
            self._db.close()
        return written

    def add(self, query: str, when: float | None = None) -> None:
        """Store `query`, submitted at `when` (default: now); kept in memory if the store is
        locked, and written with the next add or flush."""
        self.add_many([(query, time.time() if when is None else when)])

    def add_many(self, timed: list[tuple[str, float]]) -> None:
        """Store these (query, time) pairs, as `add` does, each cut to MAX_QUERY_CHARS and on
        one line (`one_line`)."""
        self.pending.extend((one_line(query[:MAX_QUERY_CHARS]), when) for query, when in timed)
        self.flush()

    def flush(self, wait: bool = False) -> bool:
        """Write the queries waiting in memory, waiting up to OPEN_WAIT_S for a locked store if
        `wait` (longer than a keystroke can); False if they could not be written (the store is
        locked or read-only, or the disk is full: `failure` says which)."""
        if not self.pending:
            return True
        if self.read_only:
            self.failure = "the store is read-only"
            return False
        try:
            db = self._connection(wait)
            db.execute(f"PRAGMA busy_timeout = {OPEN_WAIT_S * 1000 if wait else BUSY_MS}")
            try:
                with db:
                    db.executemany("INSERT INTO queries (query, time) VALUES (?, ?)", self.pending)
            finally:
                db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        except StoreError as error:  # a store locked from the start, or one of another version
            self.failure = "stayed locked" if isinstance(error, StoreLocked) else str(error)
            return False
        except sqlite3.DatabaseError as error:
            # locked by another program: they wait for the next write; else say why
            self.failure = "stayed locked" if is_locked(error) else failure(error)
            return False
        self.pending.clear()
        self._recent = None
        return True

    def recent(self, size: int, before: float = math.inf) -> tuple[str, ...]:
        """The queries submitted before `before`, oldest first, those still in memory included,
        back to the `size`-th from the end as the model counts them (`counted`): the model
        keeps its last `size` of what it gets, and gets that many.

        Read again only when this or another instance changed the store.
        """
        with self._named():
            db = self._connection()
            version = db.execute("PRAGMA data_version").fetchone()[0]
            if self._recent is None or self._recent[:3] != (version, size, before):
                rows = db.execute(
                    "SELECT query FROM queries WHERE time < ? ORDER BY time DESC, id DESC",
                    (before,),
                )
                try:
                    newest = counted((row[0] for row in rows), size)
                finally:
                    rows.close()
                self._recent = (version, size, before, newest)
        waiting = [query for query, when in reversed(self.pending) if when < before]
        return tuple(reversed(counted([*waiting, *self._recent[3]], size)))

    def count(self) -> int:
        """How many queries the file holds."""
        with self._named():
            return self._connection().execute("SELECT count(*) FROM queries").fetchone()[0]

    def entries(self) -> list[Entry]:
        """The stored queries, oldest first."""
        with self._named():
            rows = self._connection().execute(
                "SELECT id, query, time FROM queries ORDER BY time, id"
            )
            return [Entry(*row) for row in rows.fetchall()]

    def sessions(self, search: str = "") -> list[list[Entry]]:
        """The stored queries cut into sessions where `prepare` cuts them (SESSION_GAP_SECONDS
        without a query), newest session first, each oldest first; with `search`, the sessions
        holding a query that contains it, whole."""
        return self.newest_sessions(search, math.inf)[0]

    def newest_sessions(self, search: str, rows: float) -> tuple[list[list[Entry]], bool]:
        """`sessions(search)` read newest first until they hold `rows` queries (the oldest one
        listed may then be its session's newest part), so that a large store answers at once;
        and whether older queries were left unread."""
        needle = search.lower()
        found: list[list[Entry]] = []
        session: list[Entry] = []
        held = 0

        def keep() -> None:
            nonlocal held
            if any(needle in entry.query.lower() for entry in session):
                found.append(session[::-1])
                held += len(session)

        with self._named():
            cursor = self._connection().execute(
                "SELECT id, query, time FROM queries ORDER BY time DESC, id DESC"
            )
            try:
                for row in cursor:
                    entry = Entry(*row)
                    if session and (
                        session[-1].time - entry.time > SESSION_GAP_SECONDS
                        or held + len(session) >= rows
                    ):
                        keep()
                        session = []
                        if held >= rows:
                            return found, True
                    session.append(entry)
            finally:
                cursor.close()
        if session:
            keep()
        return found, False

    def delete(self, ids: list[int]) -> bool:
        """Delete the queries with these row ids, their text overwritten in the file; False if
        another program's open read kept the deleted text in the file (`scrub` again)."""
        with self._named(), self._connection() as db:
            db.executemany("DELETE FROM queries WHERE id = ?", [(i,) for i in ids])
        return self.scrub()

    def clear(self) -> bool:
        """Delete every stored query (and those waiting in memory), as `delete` does."""
        self.pending.clear()
        with self._named(), self._connection() as db:
            db.execute("DELETE FROM queries")
        return self.scrub()

    def scrub(self) -> bool:
        """Move the write-ahead log into the file and empty it, so that deleted text (zeroed by
        secure_delete in the file) is left nowhere; waits up to OPEN_WAIT_S for another
        connection's read to end. False if one still holds it: the deletion waits in the
        -wal file, and the store's file keeps the text until the write-ahead log moves in."""
        self._recent = None
        db = self._connection()
        db.execute(f"PRAGMA busy_timeout = {OPEN_WAIT_S * 1000}")
        try:
            with self._named():
                busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        return not busy

    def _connection(self, wait: bool = False) -> sqlite3.Connection:
        """The store's connection, made now for a store that was locked when it was opened
        (waiting up to OPEN_WAIT_S if `wait`, else BUSY_MS); a StoreError while it still is."""
        if self._db is None:
            try:
                waited = OPEN_WAIT_S if wait else BUSY_MS / 1000
                self._db = connect(self.path, self.read_only, waited)
            except sqlite3.OperationalError as error:
                if not is_locked(error):
                    raise
                raise StoreLocked(f"{self.path} is locked by another program") from None
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        return self._db

    @contextmanager
    def _named(self):
        """Turn a damaged file, a full disk or a read-only store into a StoreError naming the
        store; a locked one stays sqlite3.OperationalError (the caller waits or retries)."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            if is_locked(error) or isinstance(error, sqlite3.ProgrammingError):
                raise  # a closed connection is a defect, not the file's state
            raise StoreError(f"{self.path}: {failure(error)}") from None


def one_line(query: str) -> str:
    """`query` with each TAB and line break a space: a query as a line of a file holds it."""
    return query.translate(ONE_LINE)


def counted(newest_first, size: int) -> tuple[str, ...]:
    """The queries of `newest_first` up to the `size`-th as the model counts them: a query
    repeated right after itself counts once, one without words not at all (the graph drops
    both, HistoryLookup.kept), so that a store of repeats still gives the model `size`."""
    taken, count, previous = [], 0, None
    for query in newest_first:
        text = normalise(query)
        if text and text != previous:
            if count == size:
                break
            count, previous = count + 1, text
        taken.append(query)
    return tuple(taken) if count else ()
