"""The copy panel: the session words the highlighted suggestion copied, strongest first; only
words the suggestion holds (the copy head also weighs words it did not write)."""

from __future__ import annotations

import numpy as np
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive, var
from textual.widgets import Static

from mtn_keras.client import Answer, Suggestion

from .cells import bar, weight_label
from .suggestion_list import are_confidences, score_label

ROWS = 8  # words listed


def copied_words(
    text: str, weights: np.ndarray, tokens: list[list[str]], numbers: list[int]
) -> list[tuple[float, int, str]]:
    """(weight, session number, word) of the source words the suggestion `text` holds,
    largest weight first."""
    held = set(text.split())
    words = [
        (float(weight), number, word)
        for number, row_weights, row_tokens in zip(numbers, weights, tokens)
        for weight, word in zip(row_weights, row_tokens)
        if word and word in held
    ]
    return sorted(words, key=lambda item: -item[0])


def copy_table(words: list[tuple[float, int, str]]) -> Table:
    """The copied words (`copied_words`) with the session number of their query."""
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
    answer: var[Answer | None] = var(None)  # the suggestions listed, with what the model read

    def watch_suggestion(self) -> None:
        if self.suggestion is None or self.answer is None:
            self.border_title = "Copied words"
            self.border_subtitle = ""
            self.update(Text("↓ highlights a suggestion: its copied words show here.", style="dim"))
            return
        rank, item = self.suggestion
        self.border_title = f"Copied by suggestion {rank}"
        source = f" · from {item.source}" if item.source else ""
        confidences = are_confidences([listed.score for listed in self.answer])
        self.border_subtitle = score_label(item.score, confidences) + source
        tokens = self.answer.source_tokens  # the model's words per kept query
        numbers = [index + 1 for index in self.answer.positions]  # their session numbers
        words = []
        if item.copy_attention is not None and tokens:
            words = copied_words(item.text, item.copy_attention, tokens, numbers)
        self.update(copy_table(words) if words else Text("Nothing copied.", style="dim"))
