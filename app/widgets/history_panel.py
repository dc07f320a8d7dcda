"""The history panel: which of the searcher's earlier queries the model read for the
suggestions on screen, and how much each counted."""

from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from .cells import bar, short, weight_label

ROWS = 6  # earlier queries listed, those that counted most first


def merged(queries: list[str], weights: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Each distinct query once, in order of first reading, with the summed weight of its
    readings: a query typed three times is one row, not three."""
    distinct = list(dict.fromkeys(queries))
    at = {query: index for index, query in enumerate(distinct)}
    summed = np.zeros(len(distinct), dtype=np.float64)
    np.add.at(summed, [at[query] for query in queries], np.asarray(weights, dtype=np.float64))
    return distinct, summed


def history_table(queries: list[str], weights: np.ndarray, width: int) -> Table:
    """The earlier queries that counted most, each once, with their weights and bars."""
    queries, weights = merged(queries, weights)
    table = Table(box=None, padding=(0, 1), show_edge=False, show_header=False)
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    order = np.argsort(-weights, kind="stable")[:ROWS]
    top = max(float(weights.max()), 1e-9)
    for index in order:
        weight = float(weights[index])
        table.add_row(weight_label(weight), bar(weight / top, 6), short(queries[index], width - 14))
    return table


class HistoryPanel(Static):
    """The earlier queries the model read, or why it read none."""

    read: reactive[tuple[list[str], np.ndarray | None]] = reactive(
        lambda: ([], None), always_update=True
    )
    EMPTY = "No earlier queries read: they come from your sessions before this one."
    why_none = reactive(EMPTY)

    def watch_read(self) -> None:
        self._update()

    def watch_why_none(self) -> None:
        self._update()

    def on_resize(self) -> None:
        self._update()

    def _update(self) -> None:
        queries, weights = self.read
        self.border_title = f"History read ({len(queries)})" if queries else "History"
        if not queries or weights is None:
            self.update(Text(self.why_none, style="dim"))
        elif not weights.any():
            self.update(Text(f"{len(queries)} earlier queries read; none counted.", style="dim"))
        else:
            self.update(history_table(queries, weights, self.content_size.width or 40))
