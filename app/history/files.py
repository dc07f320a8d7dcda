"""History in and out of the store as files: one user of an AOL-format log imported, the store
exported one query a line with its time (TAB-separated), and such an export imported back, for
`mtn-tui`'s command line.

Both refuse rather than guess: a file with lines not in the format imports nothing, and an
export is written through a private temporary file renamed into place, so that a killed
export leaves nothing that looks complete. An export imports back as itself: each query's
text as stored, its time to the millisecond (to the second when it is a whole one), years
1 to 9999."""

from __future__ import annotations

import gzip
import math
import os
import re
import stat
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from mtn_keras.base.files import bounded_lines
from mtn_keras.data.evidence import Evidence
from mtn_keras.data.history import HISTORY_FILE_BYTES, HISTORY_LINE_BYTES
from mtn_keras.data.logs import InputError, Tally, check_inputs, read_log
from mtn_keras.data.text import normalise

from .filter import HistoryFilter
from .store import HistoryStore, one_line

EPOCH = datetime(1970, 1, 1)  # times are seconds since then, UTC
TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?")  # as exports and logs write it


def user_queries(log: str | Path, user: str) -> list[tuple[str, float]]:
    """The (query, time) pairs of `user` in the AOL-format `log`, in file order, whole: the
    history's filter reads each whole before the store cuts it to MAX_QUERY_CHARS, so that a
    secret across that length is never stored in part. As `prepare` does, queries without
    words ("-") and a query repeated right after itself (a click or a next page) are skipped,
    and so is one that the log's clicks call explicit beside a word for a minor
    (mtn_keras.data.evidence; the word rule is the filter's). Raises InputError for an
    unreadable log, one with lines not in the format (how many, and the first), or one that
    holds no query of `user`."""
    check_inputs([str(log)])
    tally, last = Tally(), None
    found: list[tuple[str, float]] = []
    evidence = Evidence.of_logs([str(log)], "aol")
    for row_user, query, when, _, _ in read_log(str(log), "aol", tally, progress=False):
        if row_user != user or not normalise(query) or query == last:
            continue
        last = query
        if not evidence.child_unsafe(normalise(query)):
            found.append((query, when))  # whole seconds: compared to the second
    if bad := tally.counts["rows_malformed"]:
        first = tally.malformed_examples[0]
        raise InputError(
            f"{bad} of {tally.counts['rows_read']} lines are not AOL-format rows (AnonID TAB "
            f"Query TAB QueryTime), the first at {first}: nothing imported"
        )
    if not found:
        raise InputError(f"{log}: no query of user {user}: nothing imported")
    return found


def read_history_file(path: str | Path, user: str | None) -> list[tuple[str, float]]:
    """The (query, time) pairs of a file to import: a store's export (`query TAB time` lines,
    as `export_tsv` writes them; `user` not needed) or one user's rows of an AOL-format log.
    Raises InputError as `user_queries` does, and for an AOL log without `user`."""
    check_inputs([str(path)], "--import-history")
    if _is_export(path):
        return exported_queries(path)
    if not user:
        raise InputError(f"{path} is an AOL-format log: give --user ID, the user to import")
    return user_queries(path, user)


def _is_export(path: str | Path) -> bool:
    """Whether the file's first line is one of an export: a query, TAB, a time."""
    with open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
        first = stream.readline(4096).decode("utf-8", "replace").rstrip("\r\n")
    fields = first.split("\t")
    return len(fields) == 2 and _export_time(fields[1]) is not None


def _export_time(text: str) -> float | None:
    """Seconds since 1970 of an export's time (UTC) or a log's, or None if it is none; an int
    for a time without a fraction of a second (an older export, a log): compared to the
    second, as such a file states it."""
    if not TIME.fullmatch(text):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if "." in text:
        return (moment - EPOCH) / timedelta(seconds=1)
    return (moment - EPOCH) // timedelta(seconds=1)


def stamp(when: float) -> str:
    """The time `when` (seconds since 1970) as an export writes it: UTC, to the millisecond,
    without the fraction when it is a whole second (as the AOL log writes times)."""
    seconds, millis = divmod(_millis(when), 1000)
    text = (EPOCH + timedelta(seconds=seconds)).isoformat(sep=" ")
    return f"{text}.{millis:03d}" if millis else text


def _millis(when: float) -> int:
    """`when` in whole milliseconds, as an export states it."""
    return round(when * 1000)


def exported_queries(path: str | Path) -> list[tuple[str, float]]:
    """The (query, time) pairs of an export written by `export_tsv`, each query's text as it
    stands. InputError naming the first line that is not UTF-8 text or not `query TAB time`,
    or one past the bounds of a history file; nothing imported."""
    found = []
    for number, raw in bounded_lines(str(path), HISTORY_LINE_BYTES, HISTORY_FILE_BYTES):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = "\x00"  # refused below, as a NUL byte is
        query, _, text = line.rpartition("\t")
        when = _export_time(text)
        if "\x00" in line:
            raise InputError(f"{path}:{number}: not UTF-8 text: nothing imported")
        if when is None or not query:
            raise InputError(
                f"{path}:{number}: not a `query TAB time` line of an export: nothing imported"
            )
        if normalise(query):
            found.append((query, when))
    if not found:
        raise InputError(f"{path}: no query to import: nothing imported")
    return found


def import_queries(store: HistoryStore, timed: list[tuple[str, float]]) -> int:
    """Add the (query, time) pairs to `store` but those already stored (same text, same time
    at the precision the file states: an import run twice, an export imported back); returns
    how many were added. A time in whole seconds (an int: a log, an older export, which cut
    the fraction) matches a stored one in that second."""
    stored = set()
    for entry in store.entries():
        stored |= {
            (entry.query, "ms", _millis(entry.time)),
            (entry.query, "s", math.floor(entry.time)),
        }
    new = [(query, when) for query, when in timed if not _known(stored, query, when)]
    store.add_many(new)
    return len(new)


def _known(stored: set, query: str, when: float) -> bool:
    """Whether `stored` holds `query` at `when`, at the precision the file states."""
    if isinstance(when, int):
        return (query, "s", when) in stored or (query, "ms", when * 1000) in stored
    return (query, "ms", _millis(when)) in stored


RECOVERY_USER = "me"  # the AnonID of a recovery file's rows


def save_unwritten(store: HistoryStore) -> Path:
    """Write the queries `store` could not take (its `pending`) to a new file beside it,
    `STORE.unwritten-DATE-XXXX.txt` (0600), as an AOL-format log of the user `me`, so that
    `mtn-tui --import-history FILE --user me` adds them once the store can be written;
    returns its path. Raises OSError naming the store's folder when it cannot be made."""
    today = time.strftime("%Y%m%d-%H%M%S")
    try:
        handle, name = tempfile.mkstemp(
            dir=store.path.parent, prefix=f"{store.path.name}.unwritten-{today}-", suffix=".txt"
        )
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(store.path.parent)) from None
    with open(handle, "w", encoding="utf-8") as file:
        file.write("AnonID\tQuery\tQueryTime\n")
        for query, when in store.pending:
            file.write(f"{RECOVERY_USER}\t{one_line(query)}\t{stamp(when)}\n")
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
    """The entries as `query TAB time` lines, each query's text as stored (a store never
    holds a TAB or a line break since it writes them as spaces: `one_line`)."""
    for entry in entries:
        file.write(f"{one_line(entry.query)}\t{stamp(entry.time)}\n")


def purge_secrets(store: HistoryStore, history_filter: HistoryFilter) -> tuple[int, bool]:
    """Delete the stored queries that `history_filter` would not keep now (they look like
    secrets or match an ignore pattern), their text overwritten; (how many, whether the text
    is gone from the file: False while another program holds it open)."""
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
