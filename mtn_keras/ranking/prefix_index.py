"""The log's completions of a typed prefix (numpy, no TensorFlow): which offerable queries
start with it, most frequent first, as Bar-Yossef and Kraus's most popular completion (MPC).

A prefix is matched by characters against the whole query followed by a space, so "h r b"
finds "h r block" and "paris " (a finished word) finds "paris" and "paris hilton" but not
"parish". Only prefixes of up to `chars` characters are keys, and only while they have more
than `top` completions (their `top` most frequent are kept) or are the first prefix of a
query with at most `top` (its completions are then a run of the queries in character
order, kept as where that run starts): a longer prefix is answered by the longest key it
starts with, its completions filtered by starts-with. PrefixLookup (prefix_lookup.py)
carries the arrays into the serving graph.
"""

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

CHARS = 16  # the longest prefix kept as a key
TOP = 10  # the completions kept for a prefix with more


def prefix_arrays(
    queries: Sequence[str], offerable: Sequence[bool], chars: int = CHARS, top: int = TOP
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The prefix keys of `queries` (ids by frequency, most frequent first) that are
    `offerable`: keys [K] (str), codes [K] int64 (>= 0: a row of `rows`; < 0: the run starting
    at position -code - 1 of `order`), rows [R, top] int32 (query ids, -1 pads) and order [N]
    int32 (the offerable ids in character order of the query and a space)."""
    ids = [i for i, ok in enumerate(offerable) if ok]
    order = sorted(ids, key=lambda i: queries[i] + " ")
    position = {i: at for at, i in enumerate(order)}
    completions = defaultdict(list)  # prefix -> its query ids, most frequent first
    for i in ids:
        text = queries[i] + " "
        for size in range(1, min(len(text), chars) + 1):
            completions[text[:size]].append(i)
    keys: list[str] = []
    codes: list[int] = []
    rows: list[list[int]] = []
    for prefix, found in completions.items():
        parent = completions.get(prefix[:-1])
        if len(found) > top:
            keys.append(prefix)
            codes.append(len(rows))
            rows.append(found[:top])
        elif parent is None or len(parent) > top:
            keys.append(prefix)
            codes.append(-min(position[i] for i in found) - 1)
    return (
        keys,
        np.array(codes, np.int64),
        np.array(rows, np.int32).reshape(-1, top),
        np.array(order, np.int32),
    )
