"""The query-log index assembled from the tables counted on the engine (index_counts.py), by
the index's own rules (`QueryLogIndex.of_counts`): the same arrays as `QueryLogIndex.build`
makes of the same sessions (tests/cluster checks them)."""

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from mtn_keras.data.evidence import Evidence
from mtn_keras.ranking.log_index import QueryLogIndex

Pair = tuple[int, int]
NEIGHBOURS = 10  # `QueryLogIndex.build`'s defaults, as `rank` builds it
QUERIES_PER_WORD = 5


class Tables(NamedTuple):
    """What the engine counted: the queries by id, each query's count, the (query, next
    query) and (query, later query) pair counts in order of first appearance, the pairs that
    PEOPLE or more people made, and the log's slips."""

    queries: list[str]
    counts: dict[str, int]
    follow: list[tuple[Pair, int]]
    later: list[tuple[Pair, int]]
    shared: list[Pair]
    slips: dict[str, str]


def index_of_tables(
    tables: Tables, blocked: Sequence[str] = (), evidence: Evidence | None = None
) -> QueryLogIndex:
    """The index of the counted `tables`, offering no query with a `blocked` phrase."""
    size = len(tables.queries)
    follow, later = _arrays(tables.follow, size), _arrays(tables.later, size)
    shared = np.sort(_arrays([(pair, 0) for pair in tables.shared], size)[0])
    return QueryLogIndex.of_counts(
        tables.queries,
        tables.counts,
        follow,
        later,
        shared,
        tables.slips,
        blocked,
        NEIGHBOURS,
        QUERIES_PER_WORD,
        evidence,
    )


def _arrays(table: list[tuple[Pair, int]], size: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys `first * size + second` int64, counts int64) of a counted table, in its order."""
    keys = np.array([a * size + b for (a, b), _ in table], np.int64)
    return keys, np.array([n for _, n in table], np.int64)
