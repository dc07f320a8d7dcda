"""The suggestion list: rank, a bar for the score relative to the best, the text and its source."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .cells import bar
from .model import Suggestions

BAR = 6  # cells of the best suggestion's bar


def score_shares(scores: list[float]) -> list[float]:
    """Each score as a share of the best one, in [0, 1].

    Scores in [0, 1] are a ranker's confidences, shown as they are; other scores are
    log probabilities, shown as probabilities relative to the best: exp(score - best).
    """
    finite = [score for score in scores if math.isfinite(score)]
    if not finite:
        return [0.0] * len(scores)
    if min(finite) >= 0 and max(finite) <= 1:
        return [score if math.isfinite(score) else 0.0 for score in scores]
    best = max(finite)
    return [math.exp(score - best) if math.isfinite(score) else 0.0 for score in scores]


class SuggestionList(OptionList, can_focus=False):
    """The suggestions; never focused, so keys keep going to the query input.

    Nothing is highlighted until the user moves there with ↓.
    """

    def show(self, suggestions: Suggestions) -> None:
        """List `suggestions`, none highlighted."""
        self.clear_options()
        shares = score_shares([item.score for item in suggestions.items])
        for rank, (item, share) in enumerate(zip(suggestions.items, shares), 1):
            prompt = Text.assemble(
                (f"{rank} ", "bold"), (bar(share, BAR), "green"), " ", item.text,
                (f"  {item.source}", "dim italic") if item.source else "",
            )
            self.add_option(Option(prompt))
        self.highlighted = None

    def show_message(self, message: str) -> None:
        """Show `message` in place of the suggestions."""
        self.clear_options()
        self.add_option(Option(Text(message, style="dim"), disabled=True))
        self.highlighted = None
