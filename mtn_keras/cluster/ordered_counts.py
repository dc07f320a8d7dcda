"""Keyed counts on the engine that keep the order of first appearance: what a Python Counter
filled in one pass holds, and what the index's arrays and the slips keep."""

from collections.abc import Hashable
from operator import add
from typing import Any

Position = tuple[int, ...]  # where an item first came: (session number, place in it, ...)


def _count_and_first(a: tuple[int, Position], b: tuple[int, Position]) -> tuple[int, Position]:
    return a[0] + b[0], min(a[1], b[1])


def _one(position: Position) -> tuple[int, Position]:
    return 1, position


def _first(item: tuple[Hashable, tuple[int, Position]]) -> Position:
    return item[1][1]


def counted_in_order(items: Any) -> list[tuple[Any, int]]:
    """(key, count) of an RDD of (key, position) items, each key once, in the order of its
    first position: summed by key on the engine, sorted here (the table is collected
    whole anyway; a sort on the engine costs two more jobs)."""
    reduced = sorted(items.mapValues(_one).reduceByKey(_count_and_first).collect(), key=_first)
    return [(key, count) for key, (count, _) in reduced]


def counted(items: Any) -> dict[Any, int]:
    """{key: count} of an RDD of keys, summed on the engine (no order kept)."""
    return dict(items.map(lambda key: (key, 1)).reduceByKey(add).collect())
