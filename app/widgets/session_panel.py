"""The session panel: the queries typed so far, numbered; those the model ignored dimmed, with
why; those it read through a correction of a slip, with its reading."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static


class SessionPanel(VerticalScroll, can_focus=False):
    """The session's queries as typed, numbered from 1; the numbers every panel uses."""

    queries: reactive[tuple[str, ...]] = reactive(tuple)
    ignored: reactive[dict[int, str]] = reactive(dict)  # 0-based position -> reason
    read_as: reactive[dict[int, str]] = reactive(dict)  # position -> corrected reading

    def compose(self):
        yield Static(id="session")

    def on_mount(self) -> None:
        # watched from here, once #session, which the redraw writes into, is composed
        for name in ("queries", "ignored", "read_as"):
            self.watch(self, name, self._update)

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
