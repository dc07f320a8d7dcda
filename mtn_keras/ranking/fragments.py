"""Fragments: suggestions that stop where queries do not ("what is the best", "stand for",
"can you get a"); the `fragments` filter (filters.py).

Where queries end is the log's to say: a word that ends fewer than END_SHARE of the log's
queries holding it (seen MIN_SEEN times or more) leaves a query open, and so do the English
function words of FUNCTION_WORDS, whatever a small log says of them.
"""

from __future__ import annotations

from collections.abc import Iterable

import tensorflow as tf

from mtn_keras.ranking.tables import SavedTable

END_SHARE = 0.03  # on the dev log: 448 words, the ends of 0.55% of the queries typed
MIN_SEEN = 20  # typed in this many queries (by count) before the log's share is trusted
FUNCTION_WORDS = frozenset(
    "a an the of to for in on at by with from into about and or but nor if than as is are "
    "was were my your his her our their its should would could does".split()
)


def open_words(queries: Iterable[str], counts: Iterable[float]) -> list[str]:
    """The words no suggestion may end on: FUNCTION_WORDS, and those the log's `queries`
    (typed `counts` times) end under END_SHARE of the time."""
    seen: dict[str, float] = {}
    ends: dict[str, float] = {}
    for query, count in zip(queries, counts):
        words = query.split()
        for word in set(words):
            seen[word] = seen.get(word, 0.0) + count
        if words:
            ends[words[-1]] = ends.get(words[-1], 0.0) + count
    rare_ends = {w for w, n in seen.items() if n >= MIN_SEEN and ends.get(w, 0.0) < END_SHARE * n}
    return sorted(FUNCTION_WORDS | rare_ends)


class Fragments(tf.Module):
    """The open words of a log (`open_words`) as a table, and which candidates are fragments."""

    def __init__(self, queries: Iterable[str], counts: Iterable[float]) -> None:
        super().__init__()
        words = open_words(queries, counts)
        self.open = SavedTable(words, tf.ones([len(words)], tf.int32), 0)

    def __call__(self, words: tf.Tensor) -> tf.Tensor:
        """[B, M]: the candidates (words [B, M, L], "" padding) that end on an open word."""
        count = tf.reduce_sum(tf.cast(words != "", tf.int32), axis=-1)
        last = tf.gather(words, tf.maximum(count - 1, 0), batch_dims=2)
        return (self.open.lookup(last) == 1) & (count > 0)
