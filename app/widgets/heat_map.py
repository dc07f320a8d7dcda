"""The attention heat map: how much each query the model used attends to each earlier one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.color import Color
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ..model import Attention
from .cells import distinct_labels, weight_label

COLD, HOT = (38, 42, 58), (255, 170, 40)  # colours of weights 0 and 1
CELL = 5  # " .42 "


def heat_map(weights: np.ndarray, numbers: list[int], queries: Sequence[str], width: int) -> Table:
    """A K x K table of weights coloured by weight; columns and rows carry the session's
    numbers, rows also the query as the model read it, cut to fit `width` cells so that
    different queries read differently."""
    table = Table(box=None, padding=0, show_edge=False, header_style="bold")
    label_width = max(6, width - CELL * len(numbers))
    table.add_column("", no_wrap=True, max_width=label_width)
    for number in numbers:
        table.add_column(str(number), justify="center", width=CELL, no_wrap=True)
    labels = distinct_labels(queries, label_width - 4)  # "12 " before, a space after
    for number, label, row in zip(numbers, labels, weights):
        cells = []
        for weight in row:
            mix = float(np.clip(weight, 0.0, 1.0))
            background = Color.from_rgb(*(c + (h - c) * mix for c, h in zip(COLD, HOT)))
            style = Style(bgcolor=background, color="black" if mix > 0.5 else "white")
            cells.append(Text(f" {weight_label(weight)} ", style=style))
        table.add_row(f"{number:>2} {label} ", *cells)
    return table


class HeatMap(Static):
    """The session encoder's attention for one layer and head, labelled with the session's
    numbers."""

    attention: reactive[Attention | None] = reactive(None, always_update=True)
    attention_layer = reactive(0)
    attention_head = reactive(0)

    def on_mount(self) -> None:
        self.border_subtitle = "rows attend to columns"
        for name in ("attention", "attention_layer", "attention_head"):
            self.watch(self, name, self._update)  # one redraw, whichever changed

    def on_resize(self) -> None:
        self._update()  # the labels are cut to the width

    def _update(self) -> None:
        if self.attention is None or not self.attention.queries:
            self.border_title = "Session attention"
            self.update(Text("Add queries to see how they attend to each other.", style="dim"))
            return
        layers, heads = self.attention.weights.shape[:2]
        layer, head = min(self.attention_layer, layers - 1), min(self.attention_head, heads - 1)
        self.border_title = f"Attention · layer {layer + 1}/{layers} · head {head + 1}/{heads}"
        numbers = [index + 1 for index in self.attention.positions]
        width = self.content_size.width or 40
        self.update(
            heat_map(self.attention.weights[layer, head], numbers, self.attention.queries, width)
        )
