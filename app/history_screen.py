"""The history screen: the stored queries by session, newest session first, searchable, with
deletes of one query, one session or everything (after a confirmation)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from .history_store import Entry, HistoryStore

SESSIONS_SHOWN = 300  # newest sessions listed; searching reaches the older ones


def session_label(session: list[Entry]) -> Text:
    """A session's heading: when it began and how many queries it holds."""
    began = datetime.fromtimestamp(session[0].time).strftime("%Y-%m-%d %H:%M")
    count = f"{len(session)} quer{'y' if len(session) == 1 else 'ies'}"
    return Text.assemble((f"Session of {began}", "bold"), (f" · {count}", "dim"))


def query_label(entry: Entry) -> Text:
    """A stored query with the time it was typed."""
    return Text.assemble(
        (datetime.fromtimestamp(entry.time).strftime("%H:%M "), "dim"), entry.query
    )


class ConfirmScreen(ModalScreen[bool]):
    """Asks before something that cannot be undone: y goes ahead, escape or n does not."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("escape,n", "answer(False)", "No")]

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="title")
            yield Static("y: yes, delete; escape or n: keep them.", classes="hint")
        yield Footer()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class HistoryScreen(ModalScreen[None]):
    """The person's stored queries: read them, search them, delete them."""

    AUTO_FOCUS = "#history-search"
    BINDINGS = [
        Binding("escape,f5", "dismiss", "Close", tooltip="close the history"),
        Binding("up", "move(-1)", "Previous", show=False, priority=True, tooltip="previous query"),
        Binding("down", "move(1)", "Next", show=False, priority=True, tooltip="next query"),
        Binding("f7", "delete_query", "Delete query", tooltip="delete the highlighted query"),
        Binding("f8", "delete_session", "Delete session", tooltip="delete its whole session"),
        Binding("f9", "delete_all", "Delete all", tooltip="delete every stored query (asks first)"),
    ]

    def __init__(self, store: HistoryStore):
        super().__init__()
        self.store = store
        self.rows: list[tuple[Entry, list[Entry]] | None] = []  # per option: (query, session)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="history-dialog"):
            yield Static(id="history-title")
            yield Input(placeholder="Search the history", id="history-search")
            yield OptionList(id="history-list")
            yield Static(
                "↑ ↓ choose; f7 deletes the query, f8 its session, f9 everything; escape closes. "
                f"Stored in {self.store.path}, on this machine only.",
                classes="hint",
            )
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_list()

    @on(Input.Changed, "#history-search")
    def refresh_list(self) -> None:
        """List the sessions holding the searched text, newest first; keep the highlight's place."""
        options = self.query_one("#history-list", OptionList)
        was = options.highlighted
        search = self.query_one("#history-search", Input).value.strip()
        sessions = self.store.sessions(search)
        total = self.store.count()
        found = f" · {len(sessions)} sessions hold “{search}”" if search else ""
        self.query_one("#history-title", Static).update(
            f"History: {total} stored quer{'y' if total == 1 else 'ies'}{found}"
        )
        options.clear_options()
        self.rows = []
        for session in sessions[:SESSIONS_SHOWN]:
            options.add_option(Option(session_label(session), disabled=True))
            self.rows.append(None)
            for entry in session:
                options.add_option(Option(query_label(entry)))
                self.rows.append((entry, session))
        if len(sessions) > SESSIONS_SHOWN:
            more = f"… {len(sessions) - SESSIONS_SHOWN} older sessions: search to find them"
            options.add_option(Option(Text(more, style="dim"), disabled=True))
            self.rows.append(None)
        if not self.rows:
            empty = "Nothing found." if search else "No stored queries."
            options.add_option(Option(Text(empty, style="dim"), disabled=True))
            self.rows.append(None)
        queries = [i for i, row in enumerate(self.rows) if row is not None]
        if queries:
            at = was if was is not None else 0
            options.highlighted = min(queries, key=lambda i: (i < at, abs(i - at)))

    def highlighted(self) -> tuple[Entry, list[Entry]] | None:
        """The highlighted query and its session, if a query is highlighted."""
        index = self.query_one("#history-list", OptionList).highlighted
        return self.rows[index] if index is not None and index < len(self.rows) else None

    def action_move(self, step: int) -> None:
        """Highlight the next (1) or previous (-1) query."""
        options = self.query_one("#history-list", OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def _change(self, change: Callable[[], None], done: str) -> None:
        """Make `change` to the store and say `done`; a store locked by another instance
        is said instead, and nothing changes."""
        try:
            change()
        except sqlite3.OperationalError as error:
            self.notify(f"Not deleted: the store is busy ({error}); try again.", severity="error")
            return
        self.notify(done)
        self.refresh_list()

    def action_delete_query(self) -> None:
        """Delete the highlighted query from the store."""
        if row := self.highlighted():
            self._change(lambda: self.store.delete([row[0].id]), f"Deleted “{row[0].query}”.")

    def action_delete_session(self) -> None:
        """Delete the session of the highlighted query from the store."""
        if row := self.highlighted():
            ids = [entry.id for entry in row[1]]
            self._change(
                lambda: self.store.delete(ids), f"Deleted a session of {len(ids)} queries."
            )

    def action_delete_all(self) -> None:
        """Delete every stored query, once the person confirms."""

        def clear(yes: bool | None) -> None:
            if yes:
                self._change(self.store.clear, "Deleted every stored query.")

        count = self.store.count()
        self.app.push_screen(ConfirmScreen(f"Delete all {count} stored queries for good?"), clear)
