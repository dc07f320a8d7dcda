"""History in and out of the store as files: one user of an AOL-format log imported, the store
exported one query a line with its time (TAB-separated), for `mtn-tui`'s command line."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from mtn_keras.data.logs import Tally, check_inputs, read_log
from mtn_keras.data.text import normalise

from .history_store import HistoryStore

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # as the AOL log writes its times


def import_log(store: HistoryStore, log: str | Path, user: str) -> int:
    """Add the queries of `user` in the AOL-format `log` to `store`, with their logged times;
    returns how many were added. As `prepare` does, queries without words ("-") and a query
    repeated right after itself (a click or a next page) are skipped, and so are rows already
    stored (same time and text: an import run twice). Raises InputError for an unreadable log.
    """
    check_inputs([str(log)])
    stored = {(entry.time, entry.query) for entry in store.entries()}
    new, last = [], None
    for row_user, query, when, _, _ in read_log(str(log), "aol", Tally(), progress=False):
        if row_user != user or not normalise(query) or query == last:
            continue
        last = query
        if (float(when), query) not in stored:
            new.append((query, float(when)))
    store.add_many(new)
    return len(new)


def export_tsv(store: HistoryStore, out: str | Path) -> int:
    """Write every stored query to `out`, oldest first, as `query TAB time` (UTC, as the AOL
    log writes times); returns how many."""
    entries = store.entries()
    with open(out, "w", encoding="utf-8") as file:
        for entry in entries:
            stamp = datetime.fromtimestamp(entry.time, timezone.utc).strftime(TIME_FORMAT)
            query = " ".join(entry.query.split())  # a TAB or line break typed would split it
            file.write(f"{query}\t{stamp}\n")
    return len(entries)
