"""The history store's file: its schema and migrations, how a connection to it is made, and
what SQLite's errors say of it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")
APP_ID = 0x4D544E48  # "MTNH" in the file's header (PRAGMA application_id): a store of ours

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


def connect(path: Path, read_only: bool, wait_s: float) -> sqlite3.Connection:
    """A connection to the store at `path` in WAL mode with secure_delete, migrated to VERSION
    (read-only: as it is, and it must be at VERSION), waiting up to `wait_s` for a lock.

    Raises sqlite3.DatabaseError for a file that is not a store.
    """
    if read_only:
        db = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)
        version = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        if version != VERSION:
            db.close()
            raise StoreError(f"read-only, at schema version {version}: make it writable once")
        return db
    db = sqlite3.connect(path, timeout=wait_s, isolation_level=None)
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
