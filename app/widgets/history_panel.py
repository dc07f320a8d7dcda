"""The history panel: which of the searcher's earlier queries the model read for the
suggestions on screen, and how much each counted."""

from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from mtn_keras.client import Answer

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
    """The earlier queries the model read for an answer, or why it read none."""

    answer: reactive[Answer | None] = reactive(None, always_update=True)
    EMPTY = "No earlier queries read: they come from your sessions before this one."
    why_none = reactive(EMPTY)

    def on_mount(self) -> None:
        for name in ("answer", "why_none"):
            self.watch(self, name, self._update)  # one redraw, whichever changed

    def on_resize(self) -> None:
        self._update()

    def _update(self) -> None:
        queries = self.answer.history if self.answer else []
        weights = self.answer.history_attention if self.answer else None
        self.border_title = f"History read ({len(queries)})" if queries else "History"
        if not queries or weights is None:
            self.update(Text(self.why_none, style="dim"))
        elif not weights.any():
            self.update(Text(f"{len(queries)} earlier queries read; none counted.", style="dim"))
        else:
            self.update(history_table(queries, weights, self.content_size.width or 40))
