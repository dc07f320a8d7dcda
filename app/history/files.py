"""History in and out of the store as files: one user of an AOL-format log imported, the store
exported one query a line with its time (TAB-separated), for `mtn-tui`'s command line.

Both refuse rather than guess: a log with lines not in the format imports nothing, and an
export is written through a private temporary file renamed into place, so that a killed
export leaves nothing that looks complete."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from mtn_keras.data.logs import InputError, Tally, check_inputs, read_log
from mtn_keras.data.text import normalise

from .filter import HistoryFilter
from .store import MAX_QUERY_CHARS, HistoryStore

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # as the AOL log writes its times


def user_queries(log: str | Path, user: str) -> list[tuple[str, float]]:
    """The (query, time) pairs of `user` in the AOL-format `log`, in file order, each cut to
    the store's MAX_QUERY_CHARS. As `prepare` does, queries without words ("-") and a query
    repeated right after itself (a click or a next page) are skipped. Raises InputError for
    an unreadable log, one with lines not in the format (how many, and the first), or one
    that holds no query of `user`."""
    check_inputs([str(log)])
    tally, found, last = Tally(), [], None
    for row_user, query, when, _, _ in read_log(str(log), "aol", tally, progress=False):
        if row_user != user or not normalise(query) or query == last:
            continue
        last = query
        found.append((query[:MAX_QUERY_CHARS], float(when)))
    if bad := tally.counts["rows_malformed"]:
        first = tally.malformed_examples[0]
        raise InputError(
            f"{bad} of {tally.counts['rows_read']} lines are not AOL-format rows (AnonID TAB "
            f"Query TAB QueryTime), the first at {first}: nothing imported"
        )
    if not found:
        raise InputError(f"{log}: no query of user {user}: nothing imported")
    return found


def import_queries(store: HistoryStore, timed: list[tuple[str, float]]) -> int:
    """Add the (query, time) pairs to `store` but those already stored (same time and text: an
    import run twice); returns how many were added."""
    stored = {(entry.time, entry.query) for entry in store.entries()}
    new = [(query, when) for query, when in timed if (when, query) not in stored]
    store.add_many(new)
    return len(new)


RECOVERY_USER = "me"  # the AnonID of a recovery file's rows


def save_unwritten(store: HistoryStore) -> Path:
    """Write the queries `store` could not take (its `pending`) to a new file beside it,
    `STORE.unwritten-DATE-XXXX.txt` (0600), as an AOL-format log of the user `me`, so that
    `mtn-tui --import-history FILE --user me` adds them once the store can be written;
    returns its path. Raises OSError naming the store's folder when it cannot be made."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        handle, name = tempfile.mkstemp(
            dir=store.path.parent, prefix=f"{store.path.name}.unwritten-{stamp}-", suffix=".txt"
        )
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(store.path.parent)) from None
    with open(handle, "w", encoding="utf-8") as file:
        file.write("AnonID\tQuery\tQueryTime\n")
        for query, when in store.pending:
            stamped = datetime.fromtimestamp(when, timezone.utc).strftime(TIME_FORMAT)
            file.write(f"{RECOVERY_USER}\t{' '.join(query.split())}\t{stamped}\n")
    return Path(name)


def export_tsv(store: HistoryStore, out: str | Path) -> int:
    """Write every stored query to `out` (`-`: standard output), oldest first, as `query TAB
    time` (UTC, as the AOL log writes times), 0600, through a temporary file renamed into
    place; returns how many. An OSError names `out`, never the temporary file."""
    entries = store.entries()
    if str(out) == "-":
        write_tsv(sys.stdout, entries)
        sys.stdout.flush()
        return len(entries)
    out = Path(out)
    try:
        handle, part = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(out)) from None
    try:
        with open(handle, "w", encoding="utf-8") as file:
            write_tsv(file, entries)
            file.flush()
            os.fsync(file.fileno())
        os.replace(part, out)
    except OSError as error:
        os.unlink(part)
        raise OSError(error.errno, error.strerror, str(out)) from None
    except BaseException:
        os.unlink(part)
        raise
    return len(entries)


def write_tsv(file, entries) -> None:
    """The entries as `query TAB time` lines."""
    for entry in entries:
        stamp = datetime.fromtimestamp(entry.time, timezone.utc).strftime(TIME_FORMAT)
        query = " ".join(entry.query.split())  # a TAB or line break typed would split it
        file.write(f"{query}\t{stamp}\n")


def purge_secrets(store: HistoryStore, history_filter: HistoryFilter) -> tuple[int, bool]:
    """Delete the stored queries that `history_filter` would not keep now (they look like
    secrets or match an ignore pattern), their text overwritten; (how many, whether the text
    is gone from the -wal file too)."""
    ids = [entry.id for entry in store.entries() if history_filter.secret(entry.query)]
    return len(ids), store.delete(ids) if ids else True


def export_refusal(out: str, store: Path, log: str | None, force: bool) -> str | None:
    """Why the export may not be written to `out`, in one line; None when it may. Never the
    store (or its -wal, -shm or -journal file) or the log being imported, whatever `force`
    says; an existing file only with `force`."""
    if out == "-":
        return None  # standard output
    if os.path.lexists(out) and not stat.S_ISREG(os.lstat(out).st_mode):  # a link too
        return f"{out} is not a regular file: give a file or a new path (or - for stdout)"
    target = Path(out).resolve()
    kept = [store.with_name(store.name + suffix).resolve() for suffix in ("", "-wal", "-shm")]
    kept.append(store.with_name(store.name + "-journal").resolve())
    if target in kept:
        return f"{out} is the history store itself: export to another file"
    if log is not None and Path(log).exists() and target.exists() and target.samefile(log):
        return f"{out} is the log being imported: export to another file"
    if target.exists() and not force:
        return f"{out} exists: give --force to replace it"
    if not target.parent.is_dir():
        return f"{target.parent}: no such folder"
    return None
