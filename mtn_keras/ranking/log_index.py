"""The query-log index: what the training log says follows what.

Built from a prepared dataset's training split (numpy only, no TensorFlow): every distinct
query with its count; the consecutive (query, next query) pairs and the within-session
(query, later query) pairs with their counts; each query's best neighbours (followers
first, then later queries of its sessions); and for each word the most frequent queries
holding it, offered as candidates after the session's rarest words and whose followers lend
evidence to a candidate; the pairs that more than one person made (`shared_keys`: one
searcher's habit is no witness that two queries go together); and the completions of typed
prefixes (prefix_index.py). The log's
misspellings are read as their corrections first (slips.py). Queries
with a blocked word or a word twice are never offered; sessions that seek sexual content
involving minors are not indexed at all. With the log's evidence (data/evidence.py), the
index keeps every query the clicks call explicit and every word that names an adult site,
for the graph to hide them as it hides explicit words: the beam can write one of them, and a
person's own session or history may hold one with words the index never saw.
`LogLookup` (log_lookup.py) carries these arrays into the serving graph as lookup tables.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from mtn_keras.data.evidence import Evidence
from mtn_keras.ranking.log_counts import neighbour_rows, pair_tables, word_rows
from mtn_keras.ranking.prefix_index import prefix_arrays
from mtn_keras.ranking.rules import blocker, repeats_a_word
from mtn_keras.ranking.slips import corrected, log_slips

LISTS = {"queries": "queries", "words": "words", "prefixes": "prefixes"}
EVIDENCE = {"explicit_queries": "explicit", "site_names": "sites", "child_keys": "child"}
FILES = tuple(f"{name}.txt" for name in (*LISTS.values(), *EVIDENCE.values())) + (
    "slips.txt",
    "index.npz",
    "index.json",
)


@dataclass
class QueryLogIndex:
    """Arrays of the index; query ids are line numbers of `queries`, most frequent first.

    pair keys are `first * len(queries) + second`; neighbour and word lists are CSR
    (row splits, then values) so that a row of them is one slice.
    """

    queries: list[str]
    counts: np.ndarray  # [Q] occurrences of each query in the training sessions
    follow_keys: np.ndarray  # [E] int64 (query, next query) pairs
    follow_counts: np.ndarray  # [E] how often
    later_keys: np.ndarray  # [E'] int64 (query, later query of the same session) pairs
    later_counts: np.ndarray  # [E'] in how many sessions
    shared_keys: np.ndarray  # int64 follow or later pairs made by PEOPLE or more people, sorted
    follow_totals: np.ndarray  # [Q] sum of each query's follow counts
    neighbour_splits: np.ndarray  # [Q + 1]
    neighbours: np.ndarray  # query ids: followers by count, then later queries by count
    words: list[str]
    word_idf: np.ndarray  # [W] log(Q / queries holding the word)
    word_splits: np.ndarray  # [W + 1]
    word_queries: np.ndarray  # query ids holding the word, most frequent first
    prefixes: list[str]  # typed prefixes with their completions (prefix_index.prefix_arrays)
    prefix_codes: np.ndarray  # [K] a row of prefix_rows, or where a run of prefix_order starts
    prefix_rows: np.ndarray  # [R, top] the most frequent completions of a prefix
    prefix_order: np.ndarray  # [N] the offerable query ids in character order
    # the log's misspellings and their corrections (slips.py), already applied
    slips: dict[str, str]
    explicit_queries: list[str] = field(default_factory=list)  # every query the clicks mark
    site_names: list[str] = field(default_factory=list)  # every adult site's name the log knows
    child_keys: list[int] = field(default_factory=list)  # keyed hashes of what seeks minors

    @classmethod
    def build(
        cls,
        sessions: Sequence[Sequence[str]],
        blocked: Collection[str] = (),
        neighbours: int = 10,
        queries_per_word: int = 5,
        users: Sequence[Hashable] | None = None,
        evidence: Evidence | None = None,
    ) -> QueryLogIndex:
        """The index of training `sessions` (lists of normalised queries) of `users` (one per
        session; None: each session is its own person); a session holding a query that seeks
        sexual content involving minors (by its words, or by the log's `evidence`) is left out
        whole, as `prepare` leaves it out (data/safety.py), so no table of the export holds
        one."""
        users = range(len(sessions)) if users is None else users
        if len(users) != len(sessions):
            raise ValueError(f"{len(users):,} users for {len(sessions):,} sessions")
        evidence = evidence or Evidence()
        sessions, users, slips = _safe_sessions(sessions, users, evidence)
        counts = Counter(q for session in sessions for q in session)
        queries = sorted(counts, key=lambda q: (-counts[q], q))
        follow, later, shared = pair_tables(sessions, users, queries)
        return cls.of_counts(
            queries,
            counts,
            follow,
            later,
            shared,
            slips,
            blocked,
            neighbours,
            queries_per_word,
            evidence,
        )

    @classmethod
    def of_counts(
        cls,
        queries: list[str],
        counts: Mapping[str, int],
        follow: tuple[np.ndarray, np.ndarray],
        later: tuple[np.ndarray, np.ndarray],
        shared: np.ndarray,
        slips: dict[str, str],
        blocked: Collection[str] = (),
        neighbours: int = 10,
        queries_per_word: int = 5,
        evidence: Evidence | None = None,
    ) -> QueryLogIndex:
        """The index of what the training sessions counted: `queries` by id (most frequent
        first) and their `counts`; the (keys, counts) of the (query, next query) and (query,
        later query) pairs in the order they first came; the `shared` keys, sorted; the log's
        `slips`. `build` counts them in one process, an engine in parts (mtn_keras.cluster)."""
        evidence = evidence or Evidence()
        size = len(queries)
        blocked_by = blocker(blocked)
        offerable = np.array([not (repeats_a_word(q) or blocked_by(q)) for q in queries], bool)
        splits, neighbour_ids = neighbour_rows((follow, later), offerable, neighbours)
        words, idf, word_splits, word_queries = word_rows(queries, offerable, queries_per_word)
        prefixes, prefix_codes, prefix_rows, prefix_order = prefix_arrays(queries, offerable)
        totals = np.zeros(size, np.float32)
        np.add.at(totals, follow[0] // max(size, 1), follow[1].astype(np.float32))
        return cls(
            queries=queries,
            counts=np.array([counts[q] for q in queries], np.float32),
            follow_keys=follow[0],
            follow_counts=follow[1].astype(np.float32),
            later_keys=later[0],
            later_counts=later[1].astype(np.float32),
            shared_keys=shared,
            follow_totals=totals,
            neighbour_splits=splits,
            neighbours=neighbour_ids,
            words=words,
            word_idf=idf,
            word_splits=word_splits,
            word_queries=word_queries,
            prefixes=prefixes,
            prefix_codes=prefix_codes,
            prefix_rows=prefix_rows,
            prefix_order=prefix_order,
            slips=slips,
            explicit_queries=sorted(evidence.explicit),
            site_names=sorted(evidence.sites),
            child_keys=sorted(evidence.child_keys),
        )

    def save(self, folder: str) -> None:
        """Writes queries.txt, words.txt, prefixes.txt, index.npz and index.json (sizes) into
        `folder`."""
        os.makedirs(folder, exist_ok=True)
        for name, file in (LISTS | EVIDENCE).items():
            items = getattr(self, name)
            with open(os.path.join(folder, f"{file}.txt"), "w", encoding="utf-8") as handle:
                handle.writelines(f"{item}\n" for item in items)
        with open(os.path.join(folder, "slips.txt"), "w", encoding="utf-8") as handle:
            handle.writelines(f"{wrong}\t{right}\n" for wrong, right in self.slips.items())
        # Any: mypy checks a ** dict's values against every parameter (allow_pickle too).
        arrays: dict[str, Any] = {k: v for k, v in vars(self).items() if isinstance(v, np.ndarray)}
        np.savez_compressed(os.path.join(folder, "index.npz"), **arrays)
        with open(os.path.join(folder, "index.json"), "w") as handle:
            json.dump(self.sizes(), handle, indent=2)

    @classmethod
    def load(cls, folder: str) -> QueryLogIndex:
        """The index saved in `folder`; OSError or ValueError when it is missing or damaged."""
        lists: dict[str, Any] = {}  # fields by name, for ** (Any: see `save`)
        for name, file in (LISTS | EVIDENCE).items():
            path = os.path.join(folder, f"{file}.txt")
            if name in EVIDENCE and not os.path.exists(path):
                continue  # an index of a dataset prepared before the log's evidence was kept
            with open(path, encoding="utf-8") as handle:
                lists[name] = [line.rstrip("\n") for line in handle]
        lists["child_keys"] = [int(key) for key in lists.get("child_keys", [])]
        with open(os.path.join(folder, "slips.txt"), encoding="utf-8") as handle:
            slips = dict(line.rstrip("\n").split("\t") for line in handle)
        with np.load(os.path.join(folder, "index.npz")) as arrays:
            if "shared_keys" not in arrays.files:
                raise ValueError(f"{folder}: an index from before shared pairs; run `rank` again")
            index = cls(**lists, **{k: arrays[k] for k in arrays.files}, slips=slips)
        if len(index.counts) != len(index.queries) or len(index.word_idf) != len(index.words):
            raise ValueError(f"{folder}: the index's lists and arrays differ in length")
        return index

    def sizes(self) -> dict[str, int]:
        """Entry counts, for the report of the index's size."""
        return {
            "queries": len(self.queries),
            "words": len(self.words),
            "follow_pairs": len(self.follow_keys),
            "later_pairs": len(self.later_keys),
            "shared_pairs": len(self.shared_keys),
            "neighbours": len(self.neighbours),
            "word_queries": len(self.word_queries),
            "prefixes": len(self.prefixes),
            "prefix_rows": len(self.prefix_rows),
            "slips": len(self.slips),
            "explicit_queries": len(self.explicit_queries),
            "site_names": len(self.site_names),
            "child_keys": len(self.child_keys),
        }

    @cached_property
    def query_ids(self) -> dict[str, int]:
        """Each query's id, for reading the index in Python (built once)."""
        return {q: i for i, q in enumerate(self.queries)}

    def follow_count(self, first: str, second: str) -> float:
        """How often `second` directly followed `first` in the training sessions."""
        return self._pair_count(self.follow_keys, self.follow_counts, first, second)

    def later_count(self, first: str, second: str) -> float:
        """In how many training sessions `second` came after `first`."""
        return self._pair_count(self.later_keys, self.later_counts, first, second)

    def shared(self, first: str, second: str) -> bool:
        """Whether `second` came after `first` in the sessions of PEOPLE or more people."""
        first_id, second_id = self.query_ids.get(first), self.query_ids.get(second)
        if first_id is None or second_id is None:
            return False
        key = first_id * len(self.queries) + second_id
        at = np.searchsorted(self.shared_keys, key)
        return bool(at < len(self.shared_keys) and self.shared_keys[at] == key)

    def neighbours_of(self, query: str) -> list[str]:
        """The candidate queries the index offers after `query`, best first."""
        i = self.query_ids.get(query)
        if i is None:
            return []
        row = self.neighbours[self.neighbour_splits[i] : self.neighbour_splits[i + 1]]
        return [self.queries[j] for j in row]

    def _pair_count(self, keys, counts, first, second):
        first, second = self.query_ids.get(first), self.query_ids.get(second)
        if first is None or second is None:
            return 0.0
        at = np.nonzero(keys == first * len(self.queries) + second)[0]
        return float(counts[at[0]]) if len(at) else 0.0


def _safe_sessions(sessions, users, evidence):
    """(sessions, users, slips): the sessions without one that seeks sexual content involving
    minors, their misspellings corrected (slips.py), and checked again: a fix can make one."""
    unsafe = evidence.child_unsafe_of(q for session in sessions for q in session)
    kept = [(s, u) for s, u in zip(sessions, users) if not any(unsafe[q] for q in s)]
    slips = log_slips(q for session, _ in kept for q in session)
    fixed: dict[str, str] = {}  # one string for each distinct query, however often it came
    kept = [([_fixed(q, slips, fixed) for q in session], user) for session, user in kept]
    unsafe.update(evidence.child_unsafe_of(q for q in fixed.values() if q not in unsafe))
    kept = [(s, u) for s, u in kept if not any(unsafe[q] for q in s)]
    return [s for s, _ in kept], [u for _, u in kept], slips


def _fixed(query: str, slips: Mapping[str, str], fixed: dict[str, str]) -> str:
    """`query` with its slips corrected, memoised in `fixed`."""
    found = fixed.get(query)
    if found is None:
        found = fixed[query] = corrected(query, slips)
    return found
