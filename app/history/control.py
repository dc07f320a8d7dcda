"""The searcher's history as the app uses it: on or off (--no-history), a private session, the
store, and the earlier queries the model reads with this session. Plain Python, no widgets."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..model import Backend
from .filter import HistoryFilter, IgnoreFileError
from .opening import open_store
from .store import HistoryStore, StoreError

OFF_NOTE = "History is off (--no-history): nothing is read or written."


class HistoryControl:
    """Whether history is read and written, and the store it goes to.

    With `use_history` False the store is never opened; in a private session nothing is read
    from or written to it.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        use_history: bool = True,
        ignore: str | Path | None = None,
    ):
        self.path = path  # None: the user-data folder's store
        self.ignore = ignore  # None: the config folder's ignore file
        self.use_history = use_history
        self.filter: HistoryFilter | None = None
        self.store: HistoryStore | None = None
        self.private = False
        self.session_began = time.time()  # the history read is what came before it

    def open(self) -> list[str]:
        """Open the store (unless history is off); what the person should hear about it."""
        if not self.use_history:
            return []
        try:
            self.filter = HistoryFilter(self.ignore)
        except IgnoreFileError as error:  # a pattern meant to hide something: keep nothing
            return [f"History off: {error}."]
        self.store, notes = open_store(self.path)
        return notes

    def close(self) -> None:
        if self.store is not None:
            self.store.close()

    def toggle_private(self) -> str | None:
        """Start or end a private session; why not, when history is off."""
        if not self.use_history:
            return OFF_NOTE
        self.private = not self.private
        return None

    def state(self, backend: Backend | None) -> str:
        """What the header says of the history: private, off, unused by this model, or ""."""
        if self.private:
            return "private session"
        if self.store is None:
            return "history off"
        if backend is not None and backend.withheld_history:
            return "history not sent to the server"
        if backend is not None and not backend.has_history:
            return "this model does not use history"
        return ""

    def earlier(self, backend: Backend | None) -> tuple[str, ...]:
        """The earlier queries `backend` reads with this session (cached by the store)."""
        if self.private or self.store is None or not (backend and backend.has_history):
            return ()
        try:
            return self.store.recent(backend.history_size, before=self.session_began)
        except (sqlite3.Error, StoreError):
            return ()  # the file went away or was damaged meanwhile: suggest without it

    def keep(self, typed: list[str], new_session: bool) -> None:
        """Store the queries `typed` (as typed), just added to the session (the first ones of
        it if `new_session`), unless private; those the filter drops are not written."""
        now = time.time()
        if new_session:
            self.session_began = now
        if self.store is not None and not self.private:
            queries = [query for query in map(self.filter.kept, typed) if query]
            self.store.add_many([(query, now) for query in queries])

    def write_pending(self) -> None:
        """Write the queries a locked store could not take yet."""
        if self.store is not None and self.store.pending:
            self.store.flush()
