"""The session panel: the queries typed so far, numbered; those the model ignored dimmed, with
why; those it read through a correction of a slip, with its reading."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static


class SessionPanel(VerticalScroll, can_focus=False):
    """The session's queries as typed, numbered from 1; the numbers every panel uses."""

    # init=False: the watchers write into #session, there once composed (on_mount)
    queries: reactive[tuple[str, ...]] = reactive(tuple, init=False)
    ignored: reactive[dict[int, str]] = reactive(dict, init=False)  # 0-based position -> reason
    read_as: reactive[dict[int, str]] = reactive(dict, init=False)  # position -> corrected reading

    def compose(self):
        yield Static(id="session")

    def on_mount(self) -> None:
        self._update()

    def watch_queries(self) -> None:
        self._update()

    def watch_ignored(self) -> None:
        self._update()

    def watch_read_as(self) -> None:
        self._update()

    def _update(self) -> None:
        self.border_title = f"Session ({len(self.queries)})"
        lines = []
        for index, query in enumerate(self.queries):
            reason = self.ignored.get(index)
            if reason:
                lines.append(
                    Text.assemble(
                        (f"{index + 1:>2} {query}", "dim strike"), (f"  ({reason})", "dim italic")
                    )
                )
            elif reading := self.read_as.get(index):
                lines.append(
                    Text.assemble(
                        (f"{index + 1:>2} ", "dim"),
                        query,
                        (f"  → read as {reading}", "italic yellow"),
                    )
                )
            else:
                lines.append(Text.assemble((f"{index + 1:>2} ", "dim"), query))
        empty = Text("No queries yet: type one and press enter.", style="dim")
        self.query_one("#session", Static).update(Text("\n").join(lines) if lines else empty)
        self.scroll_end(animate=False)
