"""Whether a shown item is grounded: a whole query someone typed, or words that stand side by
side in one (of the log, the session or the history), so that a list is measured on the
phrases it makes up that nobody wrote. A word the log lacks that the person typed is theirs
to combine: a pair holding one counts as attested."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet


class LogPhrases:
    """The whole queries, the adjacent word pairs and the words of some queries (a log's, or a
    person's session and history), built once so that checking an item is a few set lookups."""

    def __init__(self, queries: Iterable[str] = ()) -> None:
        self.queries: set[str] = set()
        self.pairs: set[tuple[str, str]] = set()
        self.words: set[str] = set()
        for query in queries:
            words = query.split()
            self.queries.add(query)
            self.words.update(words)
            self.pairs.update(zip(words, words[1:]))


NOTHING = LogPhrases()


def finished_words(prefix: str) -> list[str]:
    """The words of a typed prefix that are finished: all but a last one still being typed."""
    words = prefix.split()
    return words if prefix.endswith(" ") else words[:-1]


def session_words(context: Iterable[str]) -> set[str]:
    """The words of the session's queries."""
    return {word for query in context for word in query.split()}


def typed_words(context: Iterable[str], prefix: str = "") -> set[str]:
    """The words the person typed: those of the session's queries and the finished ones of
    the typed `prefix`."""
    return session_words(context) | set(finished_words(prefix))


def grounded(
    item: str, log: LogPhrases, own: LogPhrases = NOTHING, typed: AbstractSet[str] = frozenset()
) -> bool:
    """Whether `item` is a whole query of the `log` or of `own` (the person's queries:
    LogPhrases of the session and, for a list that read it, the history), or every adjacent
    pair of its words stands side by side in a query of either, a pair holding a word of
    `typed` (typed_words) that the log lacks counting as attested. One word: a word of the
    log, of `own` or of `typed`."""
    if item in log.queries or item in own.queries:
        return True
    words = item.split()
    if len(words) < 2:
        return any(word in log.words or word in own.words or word in typed for word in words)
    return all(
        pair in log.pairs
        or pair in own.pairs
        or any(word in typed and word not in log.words for word in pair)
        for pair in zip(words, words[1:])
    )
