"""Typing with a slip (`evaluate --prefix N --typos`): each case's typed prefix with one seeded
slip of the finger, the strings one edit away, and the share of shown items that hold a word
nobody typed (the fuzzy anchor that forgives a slip is with the others, completion_anchors).

A slip is one of: two neighbouring letters swapped, one dropped, a neighbouring key hit
instead, a letter doubled; never on the first character and never on the last one typed, so
the prefix keeps its length and what follows the slip is the query's own next characters."""

from __future__ import annotations

import random
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from mtn_keras.data.text import SLIP_ALPHABET
from mtn_keras.scorecard.anchors import Pair

SLIPS = ("swap", "drop", "neighbour", "double")
KEY_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def neighbour_keys() -> dict[str, str]:
    """Letter -> the keys beside it on a QWERTY keyboard (same row and the rows above and
    below, one column either way)."""
    where = {key: (row, col) for row, keys in enumerate(KEY_ROWS) for col, key in enumerate(keys)}
    return {
        key: "".join(
            other
            for other, (r, c) in where.items()
            if other != key and abs(r - row) <= 1 and abs(c - col) <= 1
        )
        for key, (row, col) in where.items()
    }


NEIGHBOURS = neighbour_keys()


def slipped(query: str, size: int, rng: random.Random) -> str:
    """The first `size` characters of `query` typed with one slip drawn by `rng` (a
    random.Random), or the clean prefix when no slip fits (fewer than 3 characters typed)."""
    clean = query[:size]
    spots = list(range(1, min(size, len(query)) - 1))  # never the first, nor the last typed
    tries = [(kind, at) for kind in SLIPS for at in spots]
    rng.shuffle(tries)
    for kind, at in tries:
        text = apply_slip(query, kind, at)[:size]
        if text != clean and text[0] == clean[0]:
            return text
    return clean


def apply_slip(query: str, kind: str, at: int) -> str:
    """`query` with one slip of `kind` at character `at` (the query itself where it does not
    apply: a swap of equal letters, a neighbour of a key that has none)."""
    if kind == "swap" and at + 1 < len(query):
        return query[:at] + query[at + 1] + query[at] + query[at + 2 :]
    if kind == "drop":
        return query[:at] + query[at + 1 :]
    if kind == "neighbour" and (keys := NEIGHBOURS.get(query[at])):
        return query[:at] + keys[(at * 7) % len(keys)] + query[at + 1 :]
    if kind == "double":
        return query[: at + 1] + query[at:]
    return query


def slipped_query(query: str, rng: random.Random) -> str:
    """The whole `query` typed with one slip drawn by `rng`, never on its first or last
    character (the query itself when it has fewer than 3)."""
    spots = [(kind, at) for kind in SLIPS for at in range(1, len(query) - 1)]
    spots = [(kind, at) for kind, at in spots if kind != "swap" or at + 2 < len(query)]
    rng.shuffle(spots)
    for kind, at in spots:
        if (text := apply_slip(query, kind, at)) != query:
            return text
    return query


def slipped_sessions(pairs: list[Pair], seed: int = 0) -> list[Pair]:
    """The (context, next query) `pairs` with the context's last query typed with one slip,
    seeded; an empty context stays empty."""
    rng = random.Random(seed)
    return [
        (context[:-1] + [slipped_query(context[-1], rng)] if context else context, query)
        for context, query in pairs
    ]


def slipped_prefixes(queries: list[str], size: int, seed: int = 0) -> list[str]:
    """The first `size` characters of each query typed with one slip, seeded."""
    rng = random.Random(seed)
    return [slipped(query, size, rng) for query in queries]


def one_edit(text: str, first_fixed: bool = True) -> set[str]:
    """Every string one edit from `text` (a character dropped, two neighbours swapped, one
    replaced, one inserted before another), the first character kept when `first_fixed`."""
    start = 1 if first_fixed else 0
    found: set[str] = set()
    for at in range(start, len(text)):
        head, tail = text[:at], text[at + 1 :]
        found.add(head + tail)
        if tail:
            found.add(head + tail[0] + text[at] + tail[1:])
        for char in SLIP_ALPHABET:
            found.add(head + char + text[at:])
            found.add(head + char + tail)
    found.discard(text)
    return found


def nonword_share(
    lists: list[list[str]],
    known: AbstractSet[str],
    own_queries: Sequence[Sequence[str]] | None = None,
) -> float:
    """The share of shown items (lists of texts) holding a word that nobody typed: in neither
    the `known` words (the vocabulary and the log) nor the row's user's own queries (the
    session's and the earlier ones, `own_queries`)."""
    shown = unknown = 0
    for row, items in enumerate(lists):
        own = set() if own_queries is None else {w for q in own_queries[row] for w in q.split()}
        for item in items:
            shown += 1
            unknown += any(w not in known and w not in own for w in item.split())
    return unknown / shown if shown else 0.0
