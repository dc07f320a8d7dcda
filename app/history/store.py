"""The searcher's own history: every submitted query with its time, in a private SQLite file.

The store is the person's: it lives in the platform's user-data folder, 0600 in a 0700 folder,
deletes overwrite the deleted text (secure_delete), and a query is never dropped: when the file
is locked it waits in memory and is written later. Which file is opened, and how, is
opening.py's.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mtn_keras.data.sessions import SESSION_GAP_SECONDS
from mtn_keras.data.text import normalise

BUSY_MS = 200  # how long a write waits for a locked store before keeping the query in memory
OPEN_WAIT_S = 5  # how long opening waits for another instance that is migrating the store
LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")
APP_ID = 0x4D544E48  # "MTNH" in the file's header (PRAGMA application_id): a store of ours
MAX_QUERY_CHARS = 512  # a longer entry is cut: no stored text may slow a keystroke's call

# MIGRATIONS[v] takes a store of schema version v to v + 1; version 0 is an empty file.
MIGRATIONS = [
    """
    CREATE TABLE queries (id INTEGER PRIMARY KEY, query TEXT NOT NULL, time REAL NOT NULL);
    """,
    # version 2: reading the last H queries per keystroke is one indexed query
    """
    CREATE INDEX queries_by_time ON queries (time, id);
    """,
]
VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """A store that cannot be used: the message says why, in one line."""


@dataclass(frozen=True)
class Entry:
    """One stored query: its row id, its text as typed and its time (seconds since 1970)."""

    id: int
    query: str
    time: float


class HistoryStore:
    """One person's stored queries. Open with `open_store` (opening.py), which also copes
    with damage.

    A read-only store (`read_only`) is read; this run's queries stay in memory, unwritten.
    """

    def __init__(self, path: Path, read_only: bool = False):
        self.path, self.read_only = path, read_only
        self._db = _connect(path, read_only)
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
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
        self._db.close()
        return written

    def add(self, query: str, when: float | None = None) -> None:
        """Store `query`, submitted at `when` (default: now); kept in memory if the store is
        locked, and written with the next add or flush."""
        self.add_many([(query, time.time() if when is None else when)])

    def add_many(self, timed: list[tuple[str, float]]) -> None:
        """Store these (query, time) pairs, as `add` does, each cut to MAX_QUERY_CHARS."""
        self.pending.extend((query[:MAX_QUERY_CHARS], when) for query, when in timed)
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
            self._db.execute(f"PRAGMA busy_timeout = {OPEN_WAIT_S * 1000 if wait else BUSY_MS}")
            with self._db:
                self._db.executemany(
                    "INSERT INTO queries (query, time) VALUES (?, ?)", self.pending
                )
        except sqlite3.OperationalError as error:
            # locked by another instance: they wait for the next write; else say why
            self.failure = "stayed locked" if is_locked(error) else failure(error)
            return False
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
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
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if self._recent is None or self._recent[:3] != (version, size, before):
                rows = self._db.execute(
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
            return self._db.execute("SELECT count(*) FROM queries").fetchone()[0]

    def entries(self) -> list[Entry]:
        """The stored queries, oldest first."""
        with self._named():
            rows = self._db.execute("SELECT id, query, time FROM queries ORDER BY time, id")
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
            cursor = self._db.execute(
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
        with self._named():
            with self._db:
                self._db.executemany("DELETE FROM queries WHERE id = ?", [(i,) for i in ids])
        return self.scrub()

    def clear(self) -> bool:
        """Delete every stored query (and those waiting in memory), as `delete` does."""
        self.pending.clear()
        with self._named():
            with self._db:
                self._db.execute("DELETE FROM queries")
        return self.scrub()

    def scrub(self) -> bool:
        """Move the write-ahead log into the file and empty it, so that deleted text (zeroed by
        secure_delete in the file) is left nowhere; waits up to OPEN_WAIT_S for another
        connection's read to end. False if one still holds it: the deletion waits in the
        -wal file, and the store's file keeps the text until the write-ahead log moves in."""
        self._recent = None
        self._db.execute(f"PRAGMA busy_timeout = {OPEN_WAIT_S * 1000}")
        try:
            with self._named():
                busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        return not busy

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


def is_locked(error: sqlite3.Error) -> bool:
    """Whether `error` is another connection holding the file."""
    return getattr(error, "sqlite_errorname", "") in LOCKED


def is_damaged(error: sqlite3.Error) -> bool:
    """Whether `error` is a damaged file (or one that is no database)."""
    name = getattr(error, "sqlite_errorname", "")
    return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB"


def failure(error: sqlite3.Error) -> str:
    """What went wrong with the file, in a few words."""
    name = getattr(error, "sqlite_errorname", "")
    if is_damaged(error):
        return f"the store is damaged ({error})"
    if name == "SQLITE_FULL":
        return "the disk is full"
    if name.startswith("SQLITE_READONLY"):
        return "the store is read-only"
    return str(error)


def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """A connection to the store at `path` in WAL mode with secure_delete, migrated to VERSION
    (read-only: as it is, and it must be at VERSION).

    Raises sqlite3.DatabaseError for a file that is not a store.
    """
    if read_only:
        db = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)
        version = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        if version != VERSION:
            db.close()
            raise StoreError(f"read-only, at schema version {version}: make it writable once")
        return db
    db = sqlite3.connect(path, timeout=OPEN_WAIT_S, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete = ON")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        _migrate(db)
    except sqlite3.DatabaseError:
        db.close()
        raise
    db.isolation_level = "DEFERRED"  # `with db:` commits
    return db


def _migrate(db: sqlite3.Connection) -> None:
    """Bring the store to VERSION, one migration at a time, each in its own transaction."""
    db.execute("BEGIN IMMEDIATE")  # one instance migrates; the other waits, then finds it done
    try:
        row = db.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else 0
        if version > VERSION:
            raise StoreError(f"schema version {version} is newer than this app's {VERSION}")
        for script in MIGRATIONS[version:]:
            for statement in filter(str.strip, script.split(";")):
                db.execute(statement)
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version VALUES (?)", (VERSION,))
        db.execute(f"PRAGMA application_id = {APP_ID}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def read_only_uri(path: Path) -> str:
    """The URI that opens the store at `path` for reading only. In a folder this process may
    not write, SQLite cannot make the -shm file a reader of a WAL store needs ("attempt to
    write a readonly database"): there the file is read as it stands (immutable), and
    nothing is created beside it."""
    frozen = "" if os.access(path.parent, os.W_OK) else "&immutable=1"
    return f"{path.resolve().as_uri()}?mode=ro{frozen}"
