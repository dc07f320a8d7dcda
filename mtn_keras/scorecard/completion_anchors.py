"""The model-free completion anchors that `evaluate --prefix` scores beside the model: the
most popular completion (MPC), the user's own history then MPC, and MPC that forgives one
slip (`--typos`)."""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import Counter
from collections.abc import Container
from itertools import chain

from mtn_keras.data.text import completes
from mtn_keras.scorecard.typos import one_edit

LAST_CHAR = chr(0x10FFFF)


class MostPopularCompletion:
    """The training log's most frequent queries that start with the typed prefix (Bar-Yossef
    and Kraus, WWW 2011), matched as `complete` matches (data.text.completes: by characters
    against the query followed by a space, so a finished word stands whole), the sorted keys'
    run of the prefix being exactly the queries it completes. Ties go by text."""

    def fit(self, train_sessions: list[list[str]]) -> MostPopularCompletion:
        """Counts the queries of the training sessions."""
        self.counts = Counter(query for session in train_sessions for query in session)
        self.keys = sorted(query + " " for query in self.counts)  # a prefix's run is one slice
        return self

    def complete(self, prefix: str, k: int = 5, exclude: Container[str] = ()) -> list[str]:
        """The k most frequent completions of `prefix` (none for ""), without `exclude`."""
        if not prefix:
            return []
        run = self.keys[bisect_left(self.keys, prefix) : bisect_left(self.keys, prefix + LAST_CHAR)]
        found = (key[:-1] for key in run if key[:-1] not in exclude)
        return heapq.nsmallest(k, found, key=lambda query: (-self.counts[query], query))


class HistoryThenMPC:
    """The user's own earlier queries that start with the typed prefix (most often typed
    first, ties latest first), then MPC's completions: the model-free anchor of
    `complete_with_history`, matched as MPC matches."""

    def __init__(self, mpc: MostPopularCompletion) -> None:
        self.mpc = mpc

    def complete(self, prefix: str, history: list[str], k: int = 5) -> list[str]:
        """Up to k completions of `prefix` for a user whose earlier queries are `history`."""
        if not prefix:
            return []
        counts = Counter(history)
        latest = [q for q in dict.fromkeys(reversed(history)) if completes(q, prefix)]
        own = sorted(latest, key=lambda query: -counts[query])  # stable: latest first
        return list(dict.fromkeys(own + self.mpc.complete(prefix, k)))[:k]


class FuzzyMPC:
    """MPC that forgives one slip (Elasticsearch's completion suggester with fuzziness 1):
    the training log's queries that complete what was typed first, then those that complete
    a string one edit from it (the first character exact), each by frequency."""

    def __init__(self, mpc: MostPopularCompletion) -> None:
        self.mpc = mpc

    def complete(self, prefix: str, k: int = 5) -> list[str]:
        """Up to k completions of `prefix`, exact ones first."""
        exact = self.mpc.complete(prefix, k)
        if len(exact) >= k or not prefix:
            return exact
        near = chain.from_iterable(self.mpc.complete(v, k) for v in one_edit(prefix))
        counts = self.mpc.counts
        best = heapq.nsmallest(k, set(near) - set(exact), key=lambda q: (-counts[q], q))
        return (exact + best)[:k]
