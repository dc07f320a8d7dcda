"""The query-log index assembled from the tables counted on the engine (index_counts.py), by
the index's own rules (ranking/log_counts.py, prefix_index.py): the same arrays as
`QueryLogIndex.build` makes of the same sessions (tests/cluster checks them)."""

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from mtn_keras.data.evidence import Evidence
from mtn_keras.ranking.log_counts import neighbour_rows, word_rows
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.prefix_index import prefix_arrays
from mtn_keras.ranking.rules import blocker, repeats_a_word

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
    evidence = evidence or Evidence()
    queries, size = tables.queries, len(tables.queries)
    blocked_by = blocker(blocked)
    offerable = np.array([not (repeats_a_word(q) or blocked_by(q)) for q in queries], bool)
    follow, later = _arrays(tables.follow, size), _arrays(tables.later, size)
    splits, neighbours = neighbour_rows((follow, later), offerable, NEIGHBOURS)
    words, idf, word_splits, word_queries = word_rows(queries, offerable, QUERIES_PER_WORD)
    prefixes, prefix_codes, prefix_rows, prefix_order = prefix_arrays(queries, offerable)
    totals = np.zeros(size, np.float32)
    np.add.at(totals, follow[0] // max(size, 1), follow[1].astype(np.float32))
    return QueryLogIndex(
        queries=queries,
        counts=np.array([tables.counts[q] for q in queries], np.float32),
        follow_keys=follow[0],
        follow_counts=follow[1].astype(np.float32),
        later_keys=later[0],
        later_counts=later[1].astype(np.float32),
        shared_keys=np.sort(_arrays([(pair, 0) for pair in tables.shared], size)[0]),
        follow_totals=totals,
        neighbour_splits=splits,
        neighbours=neighbours,
        words=words,
        word_idf=idf,
        word_splits=word_splits,
        word_queries=word_queries,
        prefixes=prefixes,
        prefix_codes=prefix_codes,
        prefix_rows=prefix_rows,
        prefix_order=prefix_order,
        slips=tables.slips,
        explicit_queries=sorted(evidence.explicit),
        site_names=sorted(evidence.sites),
        child_keys=sorted(evidence.child_keys),
    )


def _arrays(table: list[tuple[Pair, int]], size: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys `first * size + second` int64, counts int64) of a counted table, in its order."""
    keys = np.array([a * size + b for (a, b), _ in table], np.int64)
    return keys, np.array([n for _, n in table], np.int64)
