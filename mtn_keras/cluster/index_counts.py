"""The query-log index's counting stages on Spark: the sessions that seek sexual content
involving minors left out, the log's slips found and corrected, and the queries, the pairs
of queries and the people behind each pair counted by key, in the order a single pass over
the sessions meets them; `index_tables` assembles them into the index `QueryLogIndex.build`
makes of the same sessions."""

from collections import Counter
from collections.abc import Hashable, Sequence
from functools import partial
from operator import add
from typing import Any

from mtn_keras.cluster.index_tables import Tables, index_of_tables
from mtn_keras.cluster.ordered_counts import counted, counted_in_order
from mtn_keras.data.evidence import Evidence
from mtn_keras.ranking.log_counts import PEOPLE, later_pairs
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.slips import corrected, correction, kept_slips, neighbour_checks

Numbered = tuple[int, tuple[list[str], Hashable]]  # (session number, (queries, user))


def index_on(
    sc: Any,
    sessions: Sequence[Sequence[str]],
    users: Sequence[Hashable],
    blocked: Sequence[str] = (),
    evidence: Evidence | None = None,
) -> QueryLogIndex:
    """The index of training `sessions` of `users` (one per session), counted on `sc`."""
    evidence = evidence or Evidence()
    shared = sc.broadcast(evidence)
    numbered = sc.parallelize(list(enumerate(zip(map(list, sessions), users))))
    safe = numbered.filter(partial(_safe, evidence=shared)).cache()
    slips = _slips(sc, safe)
    fixes = sc.broadcast(slips)
    kept = safe.map(partial(_corrected, slips=fixes)).filter(partial(_safe, evidence=shared))
    kept = kept.cache()
    counts = counted(kept.flatMap(_queries))
    queries = sorted(counts, key=lambda q: (-counts[q], q))
    ids = sc.broadcast({q: i for i, q in enumerate(queries)})
    follow = counted_in_order(kept.flatMap(partial(_follow_pairs, ids=ids)))
    later = counted_in_order(kept.flatMap(partial(_later_pairs, ids=ids)))
    people = kept.flatMap(partial(_pair_people, ids=ids)).distinct().keys()
    shared_pairs = [pair for pair, n in counted(people).items() if n >= PEOPLE]
    safe.unpersist()
    kept.unpersist()
    tables = Tables(queries, counts, follow, later, shared_pairs, slips)
    return index_of_tables(tables, blocked, evidence)


def _safe(item: Numbered, evidence: Any) -> bool:
    return not any(map(evidence.value.child_unsafe, item[1][0]))


def _corrected(item: Numbered, slips: Any) -> Numbered:
    number, (session, user) = item
    return number, ([corrected(q, slips.value) for q in session], user)


def _queries(item: Numbered) -> list[str]:
    return item[1][0]


def _slips(sc: Any, safe: Any) -> dict[str, str]:
    """The log's slips (`slips.log_slips` of the sessions' queries): the words counted in
    order of first appearance, each word's correction found where the words are, the
    neighbours checked where the queries are."""
    words = Counter(dict(counted_in_order(safe.flatMap(_word_places))))
    known = sc.broadcast(words)
    ordered = sc.parallelize(list(enumerate(words.items())))
    found = sorted(ordered.flatMap(partial(_correction, words=known)).collect())
    slips = dict(fix for _, fix in found)
    fixes = set(slips.values())
    pairs = counted(safe.flatMap(partial(_pairs_with, fixes=fixes)))
    checks: dict[str, list[bool]] = {word: [] for word in slips}
    found_checks = safe.mapPartitions(partial(_checks, slips=slips, pairs=pairs))
    checks.update(found_checks.reduceByKey(add).collect())
    return kept_slips(slips, words, checks)


def _word_places(item: Numbered) -> list[tuple[str, tuple[int, int, int]]]:
    number, (session, _) = item
    return [
        (word, (number, at, place))
        for at, query in enumerate(session)
        for place, word in enumerate(query.split())
    ]


def _correction(item: tuple[int, tuple[str, int]], words: Any) -> list[tuple[int, Any]]:
    at, (word, count) = item
    fix = correction(word, count, words.value)
    return [] if fix is None else [(at, (word, fix))]


def _pairs_with(item: Numbered, fixes: set[str]) -> list[tuple[str, str]]:
    """The session's two-word neighbours that hold a correction: all the slips' checks read."""
    found = []
    for query in item[1][0]:
        split = query.split()
        found += [pair for pair in zip(split, split[1:]) if fixes.intersection(pair)]
    return found


def _checks(items: Any, slips: dict[str, str], pairs: dict[tuple[str, str], int]) -> Any:
    queries = (query for _, (session, _) in items for query in session)
    return [item for item in neighbour_checks(slips, queries, pairs).items() if item[1]]


def _follow_pairs(item: Numbered, ids: Any) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Each (query, next query) pair of the session, with where it came."""
    number, (session, _) = item
    id_of = ids.value
    pairs = zip(session, session[1:])
    return [
        ((id_of[query], id_of[following]), (number, at))
        for at, (query, following) in enumerate(pairs)
        if following != query
    ]


def _session_pairs(session: list[str], id_of: dict[str, int]) -> set[tuple[int, int]]:
    """The session's (query, later query) pairs, as the index's single pass makes the set."""
    return later_pairs([id_of[query] for query in session])


def _later_pairs(item: Numbered, ids: Any) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    number, (session, _) = item
    return [(pair, (number, at)) for at, pair in enumerate(_session_pairs(session, ids.value))]


def _pair_people(item: Numbered, ids: Any) -> list[tuple[tuple[int, int], Hashable]]:
    _, (session, user) = item
    return [(pair, user) for pair in _session_pairs(session, ids.value)]
