"""History in and out of the store as files: one user of an AOL-format log imported, the store
exported one query a line with its time (TAB-separated), for `mtn-tui`'s command line.

Both refuse rather than guess: a log with lines not in the format imports nothing, and an
export is written through a private temporary file renamed into place, so that a killed
export leaves nothing that looks complete."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from mtn_keras.data.logs import InputError, Tally, check_inputs, read_log
from mtn_keras.data.text import normalise

from .history_store import MAX_QUERY_CHARS, HistoryStore

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


def export_tsv(store: HistoryStore, out: str | Path) -> int:
    """Write every stored query to `out`, oldest first, as `query TAB time` (UTC, as the AOL
    log writes times), 0600, through a temporary file renamed into place; returns how many."""
    entries = store.entries()
    out = Path(out)
    handle, part = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    try:
        with open(handle, "w", encoding="utf-8") as file:
            for entry in entries:
                stamp = datetime.fromtimestamp(entry.time, timezone.utc).strftime(TIME_FORMAT)
                query = " ".join(entry.query.split())  # a TAB or line break typed would split it
                file.write(f"{query}\t{stamp}\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(part, out)
    except BaseException:
        os.unlink(part)
        raise
    return len(entries)


def export_refusal(out: str, store: Path, log: str | None, force: bool) -> str | None:
    """Why the export may not be written to `out`, in one line; None when it may. Never the
    store (or its -wal, -shm or -journal file) or the log being imported, whatever `force`
    says; an existing file only with `force`."""
    target = Path(out).resolve()
    kept = [store.with_name(store.name + suffix).resolve() for suffix in ("", "-wal", "-shm")]
    kept.append(store.with_name(store.name + "-journal").resolve())
    if target in kept:
        return f"{out} is the history store itself: export to another file"
    if log is not None and Path(log).exists() and target.exists() and target.samefile(log):
        return f"{out} is the log being imported: export to another file"
    if target.is_dir():
        return f"{out} is a folder: give a file name"
    if target.exists() and not force:
        return f"{out} exists: give --force to replace it"
    if not target.parent.is_dir():
        return f"{target.parent}: no such folder"
    return None
