"""The suggestion list: rank, a bar for the score relative to the best in the list, the text
and its source."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from mtn_keras.client import Answer, Suggestion

from .cells import bar
from .query_input import continue_typed

BAR = 6  # cells of the best suggestion's bar


def are_confidences(scores: list[float]) -> bool:
    """Whether `scores` are a ranker's probabilities (every finite one in [0, 1]) rather than
    a model's log probabilities (at most 0)."""
    finite = [score for score in scores if math.isfinite(score)]
    return bool(finite) and min(finite) >= 0 and max(finite) <= 1 and max(finite) > 0


def score_shares(scores: list[float]) -> list[float]:
    """Each item's bar, in [0, 1], drawn from the order shown: the first item has the full bar
    and no bar is longer than the one above it (a history item the ranker places second may
    score above the first; the order is the list's word), each otherwise its score's share of
    the first one's.

    A ranker's probabilities are small (the bundled model's best are about 0.01), so drawn as
    they are every bar would be empty; log probabilities become probabilities relative to the
    first, exp(score - first).
    """
    finite = [score for score in scores if math.isfinite(score)]
    if not finite:
        return [0.0] * len(scores)
    first, confidences = finite[0], are_confidences(scores)
    shares, longest = [], 1.0
    for score in scores:
        share = 0.0
        if math.isfinite(score):
            share = score / first if confidences else math.exp(score - first)
        longest = min(longest, share)
        shares.append(longest)
    return shares


def score_label(score: float, confidence: bool) -> str:
    """A score as a person reads it: a ranker's probability as a percentage ("chance 1.3%"),
    a model's as its log probability ("log prob -2.88")."""
    if not confidence:
        return f"log prob {score:.2f}"
    return "chance <0.1%" if score < 0.001 else f"chance {100 * score:.1f}%"


HISTORY_GLYPH = "↺"  # marks a suggestion that the searcher's own history proposed
FIXED_GLYPH = "✎"  # marks a suggestion that corrects a slip in what was typed


def suggestion_row(rank: int, share: float, item: Suggestion) -> Table:
    """One suggestion as a row of columns: rank and bar, the text (marked if it came from
    the searcher's history, or corrects a slip in what was typed), its source. A long text
    wraps inside its own column, never under the rank."""
    row = Table.grid(padding=(0, 1), expand=True)
    row.add_column(no_wrap=True)
    row.add_column(ratio=1)
    marks = [(f"{HISTORY_GLYPH} ", "bold magenta")] if item.from_history else []
    if item.corrected:
        marks.append((f"{FIXED_GLYPH} ", "bold yellow"))
    cells = [
        Text.assemble((f"{rank} ", "bold"), (bar(share, BAR), "green")),
        Text.assemble(*marks, item.text),
    ]
    if item.source:
        row.add_column(no_wrap=True)
        cells.append(Text(item.source, style="dim italic"))
    row.add_row(*cells)
    return row


class SuggestionList(OptionList, can_focus=False):
    """The suggestions; never focused, so keys keep going to the query input.

    Nothing is highlighted until the user moves there with ↓.
    """

    items: list[Suggestion] = []  # those listed

    def show(self, answer: Answer) -> None:
        """List the suggestions of `answer`, none highlighted."""
        self.clear_options()
        self.items = list(answer)
        shares = score_shares([item.score for item in answer])
        for rank, (item, share) in enumerate(zip(answer, shares), 1):
            self.add_option(Option(suggestion_row(rank, share, item)))
        self.highlighted = None

    def show_none(self, prefix: str, why: str = "") -> None:
        """Say in one line that nothing passed: `why` (the client's reason, Answer.why)
        when given, else naming what was typed when something was."""
        if why:
            self.show_message(why)
        elif prefix.strip():
            self.show_message(f"No known query starts like “{prefix.strip()}”.")
        else:
            self.show_message("No suggestions.")

    def show_message(self, message: str) -> None:
        """Show `message` in place of the suggestions."""
        self.clear_options()
        self.items = []
        self.add_option(Option(Text(message, style="dim"), disabled=True))
        self.highlighted = None

    def taken(self, typed: str) -> str | None:
        """The highlighted suggestion, continuing `typed`; None when none is highlighted."""
        if self.highlighted is None:
            return None
        return continue_typed(typed, self.items[self.highlighted].text)
