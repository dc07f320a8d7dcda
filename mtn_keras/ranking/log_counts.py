"""The query-log index's counts as flat numpy arrays (log_index.py): the pairs of queries the
training sessions made, who made them, each query's neighbours and each word's queries.

Why arrays: the log grows to tens of millions of rows, and a pair held as a Python tuple in
a Counter costs some 200 bytes where an int64 key costs 8. Each table keeps its entries in
the order they first came in the log (session by session), as a Counter would, so that ties
between equal counts fall the same way however the counts were made.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable, Sequence

import numpy as np

PEOPLE = 2  # the fewest people whose sessions make a pair of queries shared (`shared_keys`)


def pair_tables(
    sessions: Sequence[Sequence[str]], users: Sequence[Hashable], queries: Sequence[str]
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], np.ndarray]:
    """(follow, later, shared) of the `sessions` of `users`, query ids by `queries`: the
    (keys, counts) of the (query, next query) pairs and of the (query, later query) pairs
    (counted once a session) in the order they first came, and the keys of the later pairs
    that PEOPLE or more people made, sorted."""
    size, ids = len(queries), {q: i for i, q in enumerate(queries)}
    flat = np.fromiter((ids[q] for session in sessions for q in session), np.int64)
    starts = np.cumsum([0] + [len(session) for session in sessions]).astype(np.int64)
    del ids
    follow = first_seen_counts(follow_keys(flat, starts, size))
    later, makers = later_keys(flat, starts, user_codes(users), size)
    return follow, first_seen_counts(later), shared_keys(later, makers)


def first_seen_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `keys` in the order they first came, and how often each came (int64)."""
    distinct, first, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return distinct[order].astype(np.int64), counts[order]


def follow_keys(flat: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """The (query, next query) keys `first * size + second` of the sessions, in log order:
    `flat` holds every session's query ids one after another, session i from `starts[i]`;
    a query followed by itself makes no pair."""
    if len(flat) < 2:
        return np.zeros(0, np.int64)
    same = np.ones(len(flat) - 1, bool)
    ends = starts[(starts > 0) & (starts < len(flat))] - 1
    same[ends] = False  # the last query of a session and the next one's first
    same &= flat[:-1] != flat[1:]
    return flat[:-1][same] * size + flat[1:][same]


def later_keys(
    flat: np.ndarray, starts: np.ndarray, users: Sequence[int], size: int
) -> tuple[np.ndarray, np.ndarray]:
    """(keys, users): each session's distinct (query, later query) keys (sessions as in
    `follow_keys`), one session after another and within one in the order of a Python set
    of the id pairs (the order a Counter updated from that set keeps), with the user of the
    session that made each."""
    keys, people = array("q"), array("q")
    for start, end, user in zip(starts[:-1].tolist(), starts[1:].tolist(), users):
        pairs = later_pairs(flat[start:end].tolist())
        keys.extend(first * size + second for first, second in pairs)
        people.extend([user] * len(pairs))
    return np.frombuffer(keys, np.int64), np.frombuffer(people, np.int64)


def later_pairs(session: Sequence[int]) -> set[tuple[int, int]]:
    """A session's (query id, later query id) pairs, each once. The tables keep the order in
    which this set iterates, so an engine that counts in parts must make the set here too."""
    return {
        (query, other)
        for i, query in enumerate(session)
        for other in session[i + 1 :]
        if other != query
    }


def shared_keys(keys: np.ndarray, users: np.ndarray) -> np.ndarray:
    """The distinct `keys` made by PEOPLE or more distinct `users`, sorted."""
    order = np.lexsort((users, keys))
    keys, users = keys[order], users[order]
    new = np.ones(len(keys), bool)
    new[1:] = (keys[1:] != keys[:-1]) | (users[1:] != users[:-1])
    distinct, people = np.unique(keys[new], return_counts=True)
    return distinct[people >= PEOPLE].astype(np.int64)


def user_codes(users: Sequence[Hashable]) -> list[int]:
    """Each user as a number, the same number for the same user."""
    codes: dict[Hashable, int] = {}
    return [codes.setdefault(user, len(codes)) for user in users]


def neighbour_rows(
    tables: Sequence[tuple[np.ndarray, np.ndarray]],
    offerable: np.ndarray,
    neighbours: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(splits [Q + 1], values): each query id's first `neighbours` offerable neighbours,
    from the (keys, counts) `tables` in turn (followers, then later queries), each table by
    count, ties in their order; a query met again is not repeated."""
    size = len(offerable)
    found = []
    for keys, counts in tables:
        keys = keys[np.argsort(-counts, kind="stable")]
        found.append(keys[offerable[keys % size]])
    keys = np.concatenate(found)
    _, first = np.unique(keys, return_index=True)
    keys = keys[np.sort(first)]  # each pair where it came first, in the tables' order
    order = np.argsort(keys // size, kind="stable")
    keys = keys[order]
    return _top_of_groups(keys // size, keys % size, size, neighbours)


def word_rows(
    queries: Sequence[str], offerable: np.ndarray, per_word: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(words sorted, idf [W] float32, splits [W + 1], values): each word of `queries` (ids
    by frequency) with log(Q / queries holding it) and its first `per_word` offerable queries,
    most frequent first."""
    codes: dict[str, int] = {}
    held, holders = array("q"), array("q")
    for i, query in enumerate(queries):
        for word in dict.fromkeys(query.split()):
            held.append(codes.setdefault(word, len(codes)))
            holders.append(i)
    words = sorted(codes)
    rank = np.zeros(len(words), np.int64)
    rank[[codes[word] for word in words]] = np.arange(len(words))
    of_word = rank[np.frombuffer(held, np.int64)]
    order = np.argsort(of_word, kind="stable")
    of_word, holder = of_word[order], np.frombuffer(holders, np.int64)[order]
    holding = np.bincount(of_word, minlength=len(words))
    idf = np.array([math.log(len(queries) / int(n)) for n in holding], np.float32)
    kept = offerable[holder] if len(holder) else np.zeros(0, bool)
    splits, values = _top_of_groups(of_word[kept], holder[kept], len(words), per_word)
    return words, idf, splits, values


def _top_of_groups(
    groups: np.ndarray, values: np.ndarray, count: int, top: int
) -> tuple[np.ndarray, np.ndarray]:
    """(splits [count + 1], values): the first `top` `values` of each of `count` groups, from
    `values` sorted by their `groups` (ids below `count`)."""
    starts = np.searchsorted(groups, groups, side="left")
    kept = np.arange(len(groups)) - starts < top
    sizes = np.bincount(groups[kept], minlength=count)
    splits = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return splits, values[kept].astype(np.int64)
