"""The searcher's history as the app uses it: on or off (--no-history), a private session, the
store, and the earlier queries the model reads with this session. Plain Python, no widgets."""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ..model import ModelCalls
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
        # The filter judges typed queries on a thread of its own; each batch waits here,
        # with its time, until `write_pending` stores what it kept, in the order typed.
        self._judging: list[tuple[Future[list[str]], float]] = []
        self._judge = ThreadPoolExecutor(1, thread_name_prefix="history-filter")
        self._closed = False

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
        """Store what the filter is still judging, then close the store."""
        if self.store is not None and not self._closed:
            self.write_pending(wait=True)
            self.store.close()
        self._closed = True
        self._judge.shutdown()

    def toggle_private(self) -> str | None:
        """Start or end a private session; why not, when history is off."""
        if not self.use_history:
            return OFF_NOTE
        self.private = not self.private
        return None

    def state(self, model: ModelCalls | None) -> str:
        """What the header says of the history: private, off, unused by this model, or ""."""
        if self.private:
            return "private session"
        if self.store is None:
            return "history off"
        if model is not None and model.withheld_history:
            return "history not sent to the server"
        if model is not None and not model.has_history:
            return "this model does not use history"
        return ""

    def earlier(self, model: ModelCalls | None) -> tuple[str, ...]:
        """The earlier queries `model` reads with this session (cached by the store)."""
        if self.private or self.store is None or not (model and model.has_history):
            return ()
        try:
            return self.store.recent(model.history_size, before=self.session_began)
        except (sqlite3.Error, StoreError):
            return ()  # the file went away or was damaged meanwhile: suggest without it

    def keep(self, typed: list[str], new_session: bool) -> None:
        """Store the queries `typed` (as typed), just added to the session (the first ones of
        it if `new_session`), unless private; those the filter drops are not written. Waits
        for the filter: the app's screen calls `keep_later` instead."""
        self.keep_later(typed, new_session)
        self.write_pending(wait=True)

    def keep_later(self, typed: list[str], new_session: bool) -> Future[list[str]] | None:
        """`keep`, with the filter's judgement made on its own thread, so that the caller (the
        screen) never waits for it; what it keeps is stored by `write_pending` once the
        returned future is done, and by `close` at the latest. None when nothing is kept."""
        now = time.time()
        if new_session:
            self.session_began = now
        if self.store is None or self.private or self._closed:
            return None
        future = self._judge.submit(self._kept, list(typed))
        self._judging.append((future, now))
        return future

    def _kept(self, typed: list[str]) -> list[str]:
        """The queries of `typed` the filter keeps, as they are stored."""
        assert self.filter is not None  # made with the store
        return [query for query in map(self.filter.kept, typed) if query]

    def write_pending(self, wait: bool = False) -> None:
        """Store the queries the filter has judged (all of them, waiting for it, if `wait`),
        and those a locked store could not take yet."""
        if self.store is None or self._closed:
            return
        judged = []
        while self._judging and (wait or self._judging[0][0].done()):
            future, when = self._judging.pop(0)
            judged += [(query, when) for query in future.result()]
        if judged:
            self.store.add_many(judged)
        elif self.store.pending:
            self.store.flush()
