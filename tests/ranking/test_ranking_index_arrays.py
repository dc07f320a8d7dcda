"""The index built on numpy arrays against the plain Python it replaced: the same tables, in
the same order (ties between equal counts fall as a Counter's insertion order puts them),
on made-up sessions full of ties; the same prefix keys and rows; the same keyed hashes; the
same blocked texts."""

import math
from collections import Counter, defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data.evidence import Evidence
from mtn_keras.data.keyed_hash import keyed_hash, keyed_hashes
from mtn_keras.ranking.log_counts import PEOPLE
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.prefix_index import prefix_arrays
from mtn_keras.ranking.rules import blocker, blocks, repeats_a_word

WORDS = ["a", "ab", "abc", "b", "rome", "rome hotels", "x y", "nude", "é"]
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
sessions = st.lists(st.lists(queries, min_size=1, max_size=6), max_size=25)


def python_tables(sessions, users, blocked, neighbours=3, per_word=2):
    """The index's counting in Counters and dicts, as it was written before the arrays."""
    counts = Counter(q for session in sessions for q in session)
    queries = sorted(counts, key=lambda q: (-counts[q], q))
    ids = {q: i for i, q in enumerate(queries)}
    size = len(queries)
    follow, later, people = Counter(), Counter(), defaultdict(set)
    for session, user in zip(sessions, users):
        for query, following in zip(session, session[1:]):
            if following != query:
                follow[ids[query], ids[following]] += 1
        pairs = {
            (ids[q], ids[o]) for i, q in enumerate(session) for o in session[i + 1 :] if o != q
        }
        later.update(pairs)
        for pair in pairs:
            people[pair].add(user)
    offerable = [not (repeats_a_word(q) or blocks(q, blocked)) for q in queries]
    rows = defaultdict(dict)
    for table in (follow, later):
        for (first, second), _ in sorted(table.items(), key=lambda item: -item[1]):
            if offerable[second]:
                rows[first].setdefault(second)
    holding = defaultdict(list)
    for i, query in enumerate(queries):
        for word in dict.fromkeys(query.split()):
            holding[word].append(i)
    words = sorted(holding)
    return {
        "queries": queries,
        "follow_keys": [a * size + b for a, b in follow],
        "follow_counts": list(follow.values()),
        "later_keys": [a * size + b for a, b in later],
        "later_counts": list(later.values()),
        "shared_keys": sorted(a * size + b for (a, b), who in people.items() if len(who) >= PEOPLE),
        "neighbours": [list(rows[i])[:neighbours] for i in range(size)],
        "words": words,
        "word_idf": [math.log(size / len(holding[w])) for w in words],
        "word_queries": [[i for i in holding[w] if offerable[i]][:per_word] for w in words],
    }


def rows_of(splits, values):
    return [values[a:b].tolist() for a, b in zip(splits[:-1], splits[1:])]


@settings(max_examples=150, deadline=None)
@given(sessions, st.integers(1, 4))
def test_the_arrays_hold_the_counters_tables_in_their_order(made, people):
    users = [i % people for i in range(len(made))]
    index = QueryLogIndex.build(made, ["nude"], 3, 2, users=users)
    want = python_tables(made, users, ["nude"])
    assert index.queries == want["queries"]
    for name in ("follow_keys", "follow_counts", "later_keys", "later_counts", "shared_keys"):
        assert getattr(index, name).tolist() == want[name], name
    assert index.follow_keys.dtype == index.shared_keys.dtype == np.int64
    assert rows_of(index.neighbour_splits, index.neighbours) == want["neighbours"]
    assert index.words == want["words"]
    assert index.word_idf.tolist() == np.array(want["word_idf"], np.float32).tolist()
    assert rows_of(index.word_splits, index.word_queries) == want["word_queries"]
    totals = Counter()
    for key, count in zip(want["follow_keys"], want["follow_counts"]):
        totals[key // max(len(index.queries), 1)] += count
    assert index.follow_totals.tolist() == [totals[i] for i in range(len(index.queries))]


def python_prefixes(queries, offerable, chars, top):
    """The prefix keys as a dict of every prefix's completions made them."""
    ids = [i for i, ok in enumerate(offerable) if ok]
    order = sorted(ids, key=lambda i: queries[i] + " ")
    position = {i: at for at, i in enumerate(order)}
    completions = defaultdict(list)
    for i in ids:
        text = queries[i] + " "
        for size in range(1, min(len(text), chars) + 1):
            completions[text[:size]].append(i)
    keys, codes, rows = [], [], []
    for prefix, found in completions.items():
        parent = completions.get(prefix[:-1])
        if len(found) > top:
            keys.append(prefix)
            codes.append(len(rows))
            rows.append(found[:top])
        elif parent is None or len(parent) > top:
            keys.append(prefix)
            codes.append(-min(position[i] for i in found) - 1)
    return keys, codes, rows, order


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text("abé ", min_size=1, max_size=9).map(" ".join).filter(bool), unique=True),
    st.data(),
)
def test_prefix_keys_rows_and_runs_are_the_dicts(texts, data):
    offerable = data.draw(st.lists(st.booleans(), min_size=len(texts), max_size=len(texts)))
    chars, top = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 3))
    keys, codes, rows, order = prefix_arrays(texts, offerable, chars, top)
    want = python_prefixes(texts, offerable, chars, top)
    assert (keys, codes.tolist(), rows.tolist(), order.tolist()) == want
    assert codes.dtype == np.int64 and rows.dtype == order.dtype == np.int32
    assert rows.shape == (len(want[2]), top)


@given(st.lists(st.text(max_size=30)))
def test_keyed_hashes_are_each_texts_keyed_hash(texts):
    assert keyed_hashes(texts).tolist() == [keyed_hash(text) for text in texts]


@given(
    st.lists(st.sampled_from(["a", "b c", "c", " b", "a  b", "", "é d"]), max_size=4),
    st.lists(st.sampled_from(["a", "b", "c", "d", "é", " "]), max_size=6).map("".join),
)
def test_the_blocker_blocks_what_blocks_blocks(phrases, text):
    assert blocker(phrases)(text) == blocks(text, phrases)


def test_the_evidence_judges_many_queries_as_it_judges_each():
    evidence = Evidence(
        {"teen pics": "clicks", "hot pics": "clicks"},
        frozenset({"xsite"}),
        frozenset({keyed_hash("hidden words")}),
    )
    made = ["teen pics", "hot pics", "hidden words", "xsite boy", "xsite", "weather", "teen pics"]
    judged = evidence.child_unsafe_of(made)
    assert judged == {query: evidence.child_unsafe(query) for query in made}
    assert judged["hidden words"] and judged["xsite boy"] and not judged["weather"]
