"""The copy panel: the session words the highlighted suggestion copied, strongest first."""

from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from .cells import bar, weight_label
from .model import Suggestion
from .suggestion_list import score_label

ROWS = 8  # words listed


def copy_table(weights: np.ndarray, tokens: list[list[str]], numbers: list[int]) -> Table:
    """The source words with the largest copy weights, with the session number of their query."""
    words = [
        (float(weight), number, word)
        for number, row_weights, row_tokens in zip(numbers, weights, tokens)
        for weight, word in zip(row_weights, row_tokens)
        if word
    ]
    words.sort(key=lambda item: -item[0])
    top = max([weight for weight, _, _ in words] + [1e-9])
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in ("word", "query", "weight", ""):
        table.add_column(
            name, justify="right" if name in ("query", "weight") else "left", no_wrap=True
        )
    for weight, number, word in words[:ROWS]:
        table.add_row(word, str(number), weight_label(weight), bar(weight / top, 6))
    return table


class CopyPanel(Static):
    """What the highlighted suggestion copied, and its score as a person reads it."""

    # (rank, suggestion)
    suggestion: reactive[tuple[int, Suggestion] | None] = reactive(None, always_update=True)
    confidences = reactive(False)  # whether the scores are a ranker's probabilities
    tokens: reactive[list[list[str]]] = reactive(list)  # the model's words per kept query
    numbers: reactive[list[int]] = reactive(list)  # the session numbers of those queries

    def watch_suggestion(self) -> None:
        if self.suggestion is None:
            self.border_title = "Copied words"
            self.border_subtitle = ""
            self.update(Text("↓ highlights a suggestion: its copied words show here.", style="dim"))
            return
        rank, item = self.suggestion
        self.border_title = f"Copied by suggestion {rank}"
        source = f" · from {item.source}" if item.source else ""
        self.border_subtitle = score_label(item.score, self.confidences) + source
        if item.copy_attention is None or not self.tokens:
            self.update(Text("Nothing copied.", style="dim"))
            return
        self.update(copy_table(item.copy_attention, self.tokens, self.numbers))
