"""Which file the app opens as the history store, and how: only a store of the app's own
making, created private (0600 in a 0700 folder), a damaged one set aside and never deleted,
one the person may not write opened read-only. Each refusal is said in one line."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

from platformdirs import user_data_path

from .schema import APP_ID, StoreError, failure, is_damaged, read_only_uri
from .store import HistoryStore, StoreLocked

TABLES = {"queries", "schema_version"}  # a store made before APP_ID was written has these


def default_path() -> Path:
    """The store in the platform's user-data folder (~/.local/share/mtn-keras/history.db)."""
    return user_data_path("mtn-keras") / "history.db"


def open_store(path: str | Path | None = None) -> tuple[HistoryStore | None, list[str]]:
    """The store at `path` (default: the user-data one) and what the person should hear about
    it, one line each: a damaged file set aside, permissions too wide, or why there is none.

    Only a store of the app's own making is opened; a file that is not one is refused and left
    as it is, except in the default place, where an unreadable file can only be a damaged
    store. A store the person cannot write is opened read-only."""
    given = path is not None
    path = Path(path) if path is not None else default_path()
    if path.is_symlink() and not path.exists():  # SQLite would create its target, mode 644
        return None, [f"History off: {path} is a link to nowhere: give the path of a store."]
    if path.exists() and not path.is_file():
        return None, [f"History off: {path} is not a file: give the path of a history store."]
    kind = _kind(path)
    if kind == "foreign":
        return None, [f"History off: {path} is a database this app did not make: left as it is."]
    if kind == "unreadable" and given:
        return None, [f"History off: {path} is not a history store: left as it is."]
    if kind == "ours" and not _writable(path):
        try:
            store = HistoryStore(path, read_only=True)
        except (StoreError, sqlite3.DatabaseError) as error:
            return None, [f"History off: {path}: {error}."]
        return store, [f"History store {path} is read-only: read, and this run's queries not kept."]
    try:
        _make_private(path)
    except OSError as error:
        return None, [f"History off: cannot write {path.parent} ({error.strerror})."]
    try:
        return HistoryStore(path), _wide_permissions(path)
    except StoreLocked:  # written once it is free: this run's queries wait in memory till then
        return HistoryStore(path, connect=False), [
            f"History store {path} is locked by another program: this run's queries wait "
            "in memory and are written once it is free."
        ]
    except StoreError as error:
        return None, [f"History off: {path}: {error}."]
    except sqlite3.DatabaseError as error:
        if not is_damaged(error):
            return None, [f"History off: {path}: {failure(error)}."]
        aside = _set_aside(path)
        notes = [f"History store {path} was unreadable ({error}): kept as {aside.name}."]
    try:
        _make_private(path)
        return HistoryStore(path), notes
    except (OSError, sqlite3.DatabaseError, StoreError) as error:
        return None, [*notes, f"History off: cannot make a new store at {path} ({error})."]


def _kind(path: Path) -> str:
    """What the file at `path` is: `new` (none, or empty), `ours` (a store of this app: its
    header's application id, or the tables of a store made before the id was written),
    `foreign` (a SQLite database of another program) or `unreadable`."""
    if not path.exists() or path.stat().st_size == 0:
        return "new"
    try:
        with open(path, "rb") as file:
            header = file.read(100)
    except OSError:
        return "unreadable"
    if not header.startswith(b"SQLite format 3\x00") or len(header) < 100:
        return "unreadable"
    if int.from_bytes(header[68:72], "big") == APP_ID:
        return "ours"
    try:
        db = sqlite3.connect(read_only_uri(path), uri=True)
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return "unreadable"
    return "ours" if tables <= TABLES | {"queries_by_time"} else "foreign"


def _writable(path: Path) -> bool:
    """Whether this process may write the store and its folder (where SQLite puts -wal)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


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
