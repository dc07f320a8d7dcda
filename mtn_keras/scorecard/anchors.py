"""Non-neural anchors that every model must beat: copy the last query, its usual follower,
the log's queries that hold the last query's words, or (with the user's earlier queries) the
user's own history.

copy-last, adj and the log anchor suggest from the last query only, with the models'
interface `suggest(session, k) -> [(text, score), ...]` (best first); `history` also reads
the user's earlier queries: `suggest(session, history, k)`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from functools import reduce
from typing import Protocol, cast

import numpy as np

from mtn_keras.data.text import completes

ANCHORS = ("copy-last", "adj", "history")

Scored = list[tuple[str, float]]  # one suggestion list: (text, score), best first
Pair = tuple[list[str], str]  # (context: the session's queries so far, next query)
# A batch suggester: contexts (and, for one marked `reads_history`, their histories) -> lists.
BatchSuggester = Callable[..., list[Scored]]


def reading_history(suggest: BatchSuggester) -> BatchSuggester:
    """`suggest`, marked as reading histories: it takes the contexts and their histories."""
    setattr(suggest, "reads_history", True)  # a function's attribute, read by reads_history
    return suggest


def reads_history(suggest: object) -> bool:
    """Whether a batch suggester (or an anchor) reads the user's earlier queries too."""
    return bool(getattr(suggest, "reads_history", False))


class SessionAnchor(Protocol):
    """An anchor that suggests from the session alone."""

    def suggest(self, session: list[str], k: int = ...) -> Scored: ...


class HistoryAnchor(Protocol):
    """An anchor that also reads the user's earlier queries (`reads_history`)."""

    reads_history: bool

    def suggest(self, session: list[str], history: list[str], k: int = ...) -> Scored: ...


class CopyLast:
    """Suggests the session's last query again: one suggestion, score 1."""

    def suggest(self, session: list[str], k: int = 1) -> list[tuple[str, float]]:
        """The last query, or nothing for an empty session."""
        return [(session[-1], 1.0)] if session and k > 0 else []


class Adj:
    """Suggests the most frequent followers of the last query in the training sessions.

    Fewer than k followers are topped up with the most popular next queries overall; a last
    query without followers gets itself first (copy-last, score 1). A follower's score is the
    number of times it followed the last query in training plus its share of all next queries
    (which breaks ties); a topped-up query scores its share alone, below every follower.
    """

    def __init__(self) -> None:
        self.followers: dict[str, list[str]] = {}
        self.follower_counts: dict[str, Counter[str]] = {}
        self.popular: list[str] = []
        self.share: dict[str, float] = {}

    def fit(self, train_sessions: list[list[str]]) -> Adj:
        """Counts the consecutive (query, next query) pairs of the training sessions."""
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        next_counts: Counter[str] = Counter()
        for session in train_sessions:
            for prev, nxt in zip(session, session[1:]):
                if prev != nxt:
                    counts[prev][nxt] += 1
                    next_counts[nxt] += 1
        total = sum(next_counts.values())
        self.share = {q: c / total for q, c in next_counts.items()}
        self.popular = sorted(next_counts, key=lambda q: (-next_counts[q], q))
        self.follower_counts = dict(counts)
        self.followers = {
            prev: sorted(c, key=lambda q: (-c[q], -next_counts[q], q)) for prev, c in counts.items()
        }
        return self

    def suggest(self, session: list[str], k: int = 5) -> list[tuple[str, float]]:
        """Top-k followers of the last query, topped up with popular queries, never repeated."""
        if not session or k <= 0:
            return []
        last = session[-1]
        counts = self.follower_counts.get(last, Counter())
        out = [(q, counts[q] + self.share[q]) for q in self.followers.get(last, [])[:k]]
        if not out:
            out = [(last, 1.0)]
        seen = {last} | {q for q, _ in out}
        for q in self.popular:
            if len(out) >= k:
                break
            if q not in seen:
                out.append((q, self.share[q]))
                seen.add(q)
        return out


class LogAnchor:
    """The log's queries that hold every word of the session's last query, most frequent
    first (ties by text), never the last query itself nor another query of the session: what
    the log alone offers as a step beyond the last query. Score: the query's count. Each
    word's queries are an array of ids in that order (an inverted index), so a last query's
    candidates are the intersection of its words' arrays, already ranked."""

    def fit(self, train_sessions: list[list[str]]) -> LogAnchor:
        """Counts the queries of the training sessions and indexes them by word."""
        self.counts = Counter(query for session in train_sessions for query in session)
        self.queries = sorted(self.counts, key=lambda q: (-self.counts[q], q))
        ids: defaultdict[str, list[int]] = defaultdict(list)
        for i, query in enumerate(self.queries):
            for word in set(query.split()):
                ids[word].append(i)
        self.ids = {word: np.asarray(found, dtype=np.int64) for word, found in ids.items()}
        return self

    def suggest(self, session: list[str], k: int = 5, prefix: str = "") -> list[tuple[str, float]]:
        """The first k such queries that complete the typed `prefix` (data.text.completes)."""
        words = set(session[-1].split()) if session else set()
        if not words or k <= 0 or any(word not in self.ids for word in words):
            return []
        arrays = sorted((self.ids[word] for word in words), key=len)
        found = reduce(lambda a, b: np.intersect1d(a, b, assume_unique=True), arrays)
        out: Scored = []
        for i in found:
            query = self.queries[i]
            if query not in session and completes(query, prefix):
                out.append((query, float(self.counts[query])))
                if len(out) == k:
                    break
        return out


class History:
    """The user's own earlier queries, no model: first those that followed the session's
    last query in the history (most often first), then earlier queries sharing a word with
    the session (latest first), then the most frequent (ties: latest first); never a query
    of the session. Scores count down from k."""

    reads_history = True

    def suggest(
        self, session: list[str], history: list[str], k: int = 5
    ) -> list[tuple[str, float]]:
        """Up to k of the user's earlier queries for the query after `session`."""
        if not session or k <= 0:
            return []
        last = session[-1]
        followers = Counter(b for a, b in zip(history, history[1:]) if a == last and b != a)
        words = {word for query in session for word in query.split()}
        latest = list(dict.fromkeys(reversed(history)))
        sharing = [query for query in latest if words & set(query.split())]
        counts = Counter(history)
        frequent = sorted(latest, key=lambda query: -counts[query])  # stable: latest first
        ranked = [query for query, _ in followers.most_common()] + sharing + frequent
        chosen = [query for query in dict.fromkeys(ranked) if query not in session][:k]
        return [(query, float(k - i)) for i, query in enumerate(chosen)]


def batched(anchor: SessionAnchor | HistoryAnchor, k: int = 5) -> BatchSuggester:
    """Wraps an anchor as a batch suggester: contexts (and, for an anchor that reads them,
    histories) -> lists of (text, score)."""
    if reads_history(anchor):
        reader = cast(HistoryAnchor, anchor)

        def suggest(contexts: list[list[str]], histories: list[list[str]]) -> list[Scored]:
            return [reader.suggest(c, h, k) for c, h in zip(contexts, histories)]

        return reading_history(suggest)
    plain = cast(SessionAnchor, anchor)
    return lambda contexts: [plain.suggest(context, k) for context in contexts]
