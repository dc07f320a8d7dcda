"""The searcher's own history: every submitted query with its time, in a private SQLite file.

The store is the person's: it lives in the platform's user-data folder, 0600 in a 0700 folder,
deletes overwrite the deleted text (secure_delete), and a query is never dropped: when the file
is locked it waits in memory and is written later.
"""

from __future__ import annotations

import math
import os
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_path

from mtn_keras.data.sessions import sessionize

GAP_SECONDS = 30 * 60  # a session ends after 30 minutes without a query, as in `prepare`
BUSY_MS = 200  # how long a write waits for a locked store before keeping the query in memory
OPEN_WAIT_S = 5  # how long opening waits for another instance that is migrating the store
LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")

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


def default_path() -> Path:
    """The store in the platform's user-data folder (~/.local/share/mtn-keras/history.db)."""
    return user_data_path("mtn-keras") / "history.db"


class StoreError(Exception):
    """A store that cannot be used: the message says why, in one line."""


@dataclass(frozen=True)
class Entry:
    """One stored query: its row id, its text as typed and its time (seconds since 1970)."""

    id: int
    query: str
    time: float


class HistoryStore:
    """One person's stored queries. Open with `open_store`, which also copes with damage."""

    def __init__(self, path: Path):
        self.path = path
        self._db = _connect(path)
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        self.pending: list[tuple[str, float]] = []  # queries a locked store could not take yet
        # (data version, size, before, queries) of the latest `recent`
        self._recent: tuple[int, int, float, tuple[str, ...]] | None = None

    def close(self) -> bool:
        """Write what waits in memory, waiting longer for a locked store than a keystroke
        can, and close the file; False if queries were left unwritten (still in `pending`)."""
        self._db.execute(f"PRAGMA busy_timeout = {OPEN_WAIT_S * 1000}")
        written = self.flush()
        self._db.close()
        return written

    def add(self, query: str, when: float | None = None) -> None:
        """Store `query`, submitted at `when` (default: now); kept in memory if the store is
        locked, and written with the next add or flush."""
        self.add_many([(query, time.time() if when is None else when)])

    def add_many(self, timed: list[tuple[str, float]]) -> None:
        """Store these (query, time) pairs, as `add` does."""
        self.pending.extend(timed)
        self.flush()

    def flush(self) -> bool:
        """Write the queries waiting in memory; False if the store is still locked."""
        if not self.pending:
            return True
        try:
            with self._db:
                self._db.executemany(
                    "INSERT INTO queries (query, time) VALUES (?, ?)", self.pending
                )
        except sqlite3.OperationalError:
            return False  # locked by another instance: they wait for the next write
        self.pending.clear()
        self._recent = None
        return True

    def recent(self, size: int, before: float = math.inf) -> tuple[str, ...]:
        """The last `size` queries submitted before `before`, oldest first, those still in
        memory included.

        One indexed query, read again only when this or another instance changed the store.
        """
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if self._recent is None or self._recent[:3] != (version, size, before):
            rows = self._db.execute(
                "SELECT query FROM queries WHERE time < ? ORDER BY time DESC, id DESC LIMIT ?",
                (before, size),
            ).fetchall()
            self._recent = (version, size, before, tuple(row[0] for row in reversed(rows)))
        kept = self._recent[3] + tuple(query for query, when in self.pending if when < before)
        return kept[max(len(kept) - size, 0) :] if size else ()

    def count(self) -> int:
        """How many queries the file holds."""
        return self._db.execute("SELECT count(*) FROM queries").fetchone()[0]

    def entries(self) -> list[Entry]:
        """The stored queries, oldest first."""
        rows = self._db.execute("SELECT id, query, time FROM queries ORDER BY time, id")
        return [Entry(*row) for row in rows.fetchall()]

    def sessions(self, search: str = "") -> list[list[Entry]]:
        """The stored queries cut into sessions at 30-minute gaps, newest session first, each
        oldest first; with `search`, the sessions holding a query that contains it, whole."""
        timed = [(entry.time, entry.id, entry) for entry in self.entries()]
        cut = [[entry for _, _, entry in session] for session in sessionize(timed, GAP_SECONDS)]
        needle = search.lower()
        return [s for s in reversed(cut) if any(needle in e.query.lower() for e in s)]

    def delete(self, ids: list[int]) -> None:
        """Delete the queries with these row ids, their text overwritten in the file."""
        with self._db:
            self._db.executemany("DELETE FROM queries WHERE id = ?", [(i,) for i in ids])
        self._scrub()

    def clear(self) -> None:
        """Delete every stored query (and those waiting in memory)."""
        self.pending.clear()
        with self._db:
            self._db.execute("DELETE FROM queries")
        self._scrub()

    def _scrub(self) -> None:
        """Move the write-ahead log into the file and empty it, so that deleted text (zeroed by
        secure_delete in the file) is left nowhere."""
        self._recent = None
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to the store at `path` in WAL mode with secure_delete, migrated to VERSION.

    Raises sqlite3.DatabaseError for a file that is not a store.
    """
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
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def open_store(path: Path | None = None) -> tuple[HistoryStore | None, list[str]]:
    """The store at `path` (default: the user-data one) and what the person should hear about
    it, one line each: a damaged file set aside, permissions too wide, or why there is none."""
    path = Path(path) if path is not None else default_path()
    try:
        _make_private(path)
    except OSError as error:
        return None, [f"History off: cannot write {path.parent} ({error.strerror})."]
    try:
        return HistoryStore(path), _wide_permissions(path)
    except StoreError as error:
        return None, [f"History off: {path}: {error}."]
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", "") in LOCKED:
            return None, [f"History off: {path} is locked by another program."]
        aside = _set_aside(path)
        notes = [f"History store {path} was unreadable ({error}): kept as {aside.name}."]
    try:
        _make_private(path)
        return HistoryStore(path), notes
    except (OSError, sqlite3.DatabaseError) as error:
        return None, [*notes, f"History off: cannot make a new store at {path} ({error})."]


def _wide_permissions(path: Path) -> list[str]:
    """A line for a store that others may read or write, else none."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if not mode & 0o077:
        return []
    return [f"History store {path} is open to others (mode {mode:o}): chmod 600 it."]


def _make_private(path: Path) -> None:
    """Create the store's folder (0700) and an empty file (0600) unless they exist."""
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass
    if not os.access(path.parent, os.W_OK):
        raise PermissionError(13, "Permission denied")  # SQLite needs its -wal file beside


def _set_aside(path: Path) -> Path:
    """Rename the damaged store (and its -wal and -shm files) with a timestamp; never delete."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    number = 1
    while aside.exists():  # set aside twice in one second: never overwrite the first
        number += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(aside.with_name(aside.name + suffix))
    return aside
