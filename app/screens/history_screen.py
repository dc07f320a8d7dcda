"""The history screen: the stored queries by session, newest session first, searchable, with
deletes of one query, one session or everything, each after a confirmation that names it.
A large store is listed from its newest queries, ROWS_SHOWN at a time."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from ..history.store import Entry, HistoryStore, StoreError

ROWS_SHOWN = 500  # newest queries listed; searching reaches the older ones


def local_time(when: float) -> datetime:
    """The local time of `when` (seconds since 1970); in UTC where the platform cannot say
    (a time in year 1 or 9999, which an import may hold)."""
    try:
        return datetime.fromtimestamp(when)
    except (ValueError, OverflowError, OSError):
        return datetime(1970, 1, 1) + timedelta(seconds=when)


def session_label(session: list[Entry]) -> Text:
    """A session's heading: when it began and how many queries it holds."""
    began = local_time(session[0].time).strftime("%Y-%m-%d %H:%M")
    count = f"{len(session)} quer{'y' if len(session) == 1 else 'ies'}"
    return Text.assemble((f"Session of {began}", "bold"), (f" · {count}", "dim"))


def query_label(entry: Entry) -> Text:
    """A stored query with the time it was typed."""
    return Text.assemble((local_time(entry.time).strftime("%H:%M "), "dim"), entry.query)


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
    def searched(self) -> None:
        """A new search: its first result is highlighted, the row f7 acts on."""
        self.refresh_list(keep_place=False)

    def refresh_list(self, keep_place: bool = True) -> None:
        """List the sessions holding the searched text, newest first; keep the highlight's place
        (after a delete) or highlight the first query."""
        options = self.query_one("#history-list", OptionList)
        was = options.highlighted if keep_place else None
        search = self.query_one("#history-search", Input).value.strip()
        try:
            sessions, more = self.store.newest_sessions(search, ROWS_SHOWN)
            total = self.store.count()
        except StoreError as error:
            self.query_one("#history-title", Static).update(f"History unreadable: {error}")
            options.clear_options()
            self.rows = []
            return
        found = f" · {len(sessions)} sessions hold “{search}”" if search else ""
        self.query_one("#history-title", Static).update(
            f"History: {total} stored quer{'y' if total == 1 else 'ies'}{found}"
        )
        options.clear_options()
        self.rows = []
        for session in sessions:
            options.add_option(Option(session_label(session), disabled=True))
            self.rows.append(None)
            for entry in session:
                options.add_option(Option(query_label(entry)))
                self.rows.append((entry, session))
        if more:
            older = "… older queries not listed: search to find them"
            options.add_option(Option(Text(older, style="dim"), disabled=True))
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

    def _change(self, change: Callable[[], bool], done: str) -> None:
        """Make `change` to the store and say `done`; a store locked by another instance is
        said instead, and nothing changes; deleted text another program's read keeps in the
        -wal file is said too."""
        try:
            scrubbed = change()
        except sqlite3.OperationalError as error:
            self.notify(f"Not deleted: the store is busy ({error}); try again.", severity="error")
            return
        except StoreError as error:
            self.notify(f"Not deleted: {error}.", severity="error")
            return
        self.notify(done)
        if not scrubbed:
            self.notify(
                f"Another program has {self.store.path.name} open: the deleted text stays in "
                "that file until the program closes it.",
                severity="warning",
                timeout=15,
            )
        self.refresh_list()

    def _confirmed(self, question: str, change: Callable[[], bool], done: str) -> None:
        """Ask `question`, and make `change` once the person says yes."""

        def answered(yes: bool | None) -> None:
            if yes:
                self._change(change, done)

        self.app.push_screen(ConfirmScreen(question), answered)

    def action_delete_query(self) -> None:
        """Delete the highlighted query from the store, once the person confirms."""
        if row := self.highlighted():
            query = row[0].query
            self._confirmed(
                f"Delete “{query}” for good?",
                lambda: self.store.delete([row[0].id]),
                f"Deleted “{query}”.",
            )

    def action_delete_session(self) -> None:
        """Delete the session of the highlighted query from the store, once the person confirms."""
        if row := self.highlighted():
            ids = [entry.id for entry in row[1]]
            began = session_label(row[1]).plain.split(" · ")[0]
            self._confirmed(
                f"Delete the {began}, {len(ids)} queries, for good?",
                lambda: self.store.delete(ids),
                f"Deleted a session of {len(ids)} queries.",
            )

    def action_delete_all(self) -> None:
        """Delete every stored query, once the person confirms."""
        try:
            every = f"all {self.store.count()}"
        except StoreError:
            every = "every one of the"
        self._confirmed(
            f"Delete {every} stored queries for good?",
            self.store.clear,
            "Deleted every stored query.",
        )
