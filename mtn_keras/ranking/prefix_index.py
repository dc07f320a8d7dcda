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

from collections.abc import Sequence

import numpy as np

CHARS = 16  # the longest prefix kept as a key
TOP = 10  # the completions kept for a prefix with more
CHUNK = 1 << 18  # texts compared a chunk at a time (`_common_lengths`)


def prefix_arrays(
    queries: Sequence[str],
    offerable: Sequence[bool] | np.ndarray,
    chars: int = CHARS,
    top: int = TOP,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The prefix keys of `queries` (ids by frequency, most frequent first) that are
    `offerable`: keys [K] (str), codes [K] int64 (>= 0: a row of `rows`; < 0: the run starting
    at position -code - 1 of `order`), rows [R, top] int32 (query ids, -1 pads) and order [N]
    int32 (the offerable ids in character order of the query and a space).

    The queries holding a prefix are a run of `order`; the keys come in the order a walk over
    the queries by id, each one's prefixes shortest first, first meets them."""
    ids = np.flatnonzero(np.asarray(offerable, bool))
    texts = [queries[i] + " " for i in ids.tolist()]
    by_text = np.array(sorted(range(len(texts)), key=texts.__getitem__), np.int64)
    texts = [texts[at] for at in by_text]
    order = ids[by_text]
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    common = _common_lengths(texts, chars)
    columns = []  # per prefix length: each key's first id, length, run start, run size
    parent_sizes = np.full(len(texts), top + 1)  # a first character has no parent prefix
    for length in range(1, chars + 1):
        member = lengths >= length
        starts, sizes, firsts = _runs(member, common >= length, order)
        keep = (sizes > top) | (parent_sizes[starts] > top)
        columns.append((firsts[keep], np.full(keep.sum(), length), starts[keep], sizes[keep]))
        parent_sizes = np.zeros(len(texts), np.int64)
        parent_sizes[member] = np.repeat(sizes, sizes)
    first, size, start, count = (np.concatenate(column) for column in zip(*columns))
    walk = np.lexsort((size, first))
    size, start, count = size[walk], start[walk], count[walk]
    row = count > top
    codes = np.where(row, np.cumsum(row) - 1, -start - 1).astype(np.int64)
    rows = [
        np.sort(np.partition(order[s : s + n], top)[:top]) for s, n in zip(start[row], count[row])
    ]
    return (
        [texts[s][:n] for s, n in zip(start.tolist(), size.tolist())],
        codes,
        np.array(rows, np.int32).reshape(-1, top),
        order.astype(np.int32),
    )


def _runs(
    member: np.ndarray, joined: np.ndarray, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, sizes, smallest ids) of the runs of sorted texts sharing a prefix of one
    length: `member` marks the texts that long, `joined[j]` texts j and j + 1 sharing it."""
    begins = member.copy()
    begins[1:] &= ~joined
    starts = np.flatnonzero(begins)
    sizes = np.bincount(np.cumsum(begins)[member] - 1, minlength=len(starts))
    bounds = np.stack([starts, starts + sizes], 1).ravel()
    smallest = np.minimum.reduceat(np.append(order, 0), bounds)[::2] if len(starts) else starts
    return starts, sizes, smallest


def _common_lengths(texts: Sequence[str], chars: int) -> np.ndarray:
    """[N - 1]: how many first characters (at most `chars`) texts j and j + 1 share."""
    found = []
    for at in range(0, max(len(texts) - 1, 0), CHUNK):
        codes = np.array(texts[at : at + CHUNK + 1], f"<U{chars}").view(np.uint32)
        codes = codes.reshape(-1, chars)
        differ = codes[:-1] != codes[1:]
        found.append(np.where(differ.any(1), differ.argmax(1), chars))
    return np.concatenate(found) if found else np.zeros(0, np.int64)
