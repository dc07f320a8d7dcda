"""What a searcher sees in a suggestion list, as measured by `evaluate`: repeats of the
session, repeated words, blocked words; and the same checks as a filter for the anchors,
so that they are compared with the filtered model on equal terms."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mtn_keras.ranking.rules import blocks, repeats_a_word, repeats_session
from mtn_keras.scorecard.anchors import BatchSuggester, Scored


def is_new(reference: str, context: Sequence[str]) -> bool:
    """The next query is new: neither a query of the session nor inside one."""
    return not repeats_session(reference, context)


def filtered(suggester: BatchSuggester, phrases: Collection[str], k: int = 5) -> BatchSuggester:
    """A batch suggester whose lists drop what the filters drop (session repeats, repeated
    words, blocked words): the first k of the rest of `suggester`'s (longer) lists."""

    def suggest(contexts: list[list[str]]) -> list[Scored]:
        return [
            [
                (text, score)
                for text, score in suggestions
                if not (
                    repeats_session(text, context) or repeats_a_word(text) or blocks(text, phrases)
                )
            ][:k]
            for context, suggestions in zip(contexts, suggester(contexts))
        ]

    return suggest
