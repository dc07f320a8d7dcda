"""Reading a prepared dataset directory (written by `prepare`): its splits, their users and
its stats.json, with errors that name the file."""

import json
import os
from collections.abc import Iterator


def load_split(directory: str, name: str) -> list[list[str]]:
    """The sessions of one split (`train`, `valid` or `test`) of a prepared directory."""
    return read_sessions(os.path.join(directory, f"{name}.tsv"))


def load_users(directory: str, name: str) -> list[str] | None:
    """The user of each session of one split (aligned with `load_split`), or None for a
    dataset prepared before users were kept. Raises ValueError if the counts differ."""
    path = os.path.join(directory, f"{name}.users")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as file:
        users = [line.split("\t")[0] for line in file.read().splitlines()]
    sessions = len(load_split(directory, name))
    if len(users) != sessions:
        raise ValueError(
            f"{path}: {len(users):,} users for the {sessions:,} sessions of {name}.tsv "
            "(prepare the dataset again)"
        )
    return users


def read_sessions(path: str | os.PathLike) -> list[list[str]]:
    """The sessions of a split file: one a line, queries TAB-separated. Raises ValueError
    naming the file and line of a line that is not UTF-8."""
    return list(iter_sessions(path))


def iter_sessions(path: str | os.PathLike) -> Iterator[list[str]]:
    """`read_sessions`' sessions one at a time, the file read as they are asked for."""
    with open(path, "rb") as file:
        for number, raw in enumerate(file, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{path}:{number}: not UTF-8") from None
            if line.strip():
                yield line.rstrip("\n").split("\t")


def load_stats(directory: str) -> dict:
    """stats.json of a prepared directory. Raises ValueError naming the file if it is not
    a JSON object."""
    path = os.path.join(directory, "stats.json")
    try:
        with open(path, encoding="utf-8") as file:
            stats = json.load(file)
    except ValueError as error:  # not UTF-8, or not JSON
        raise ValueError(
            f"{path}: not a stats.json ({' '.join(str(error).split())[:120]})"
        ) from None
    if not isinstance(stats, dict):
        raise ValueError(f"{path}: not a stats.json (no JSON object)")
    options = stats.get("options", {})
    if not isinstance(options, dict):
        raise ValueError(
            f"{path}: not a stats.json (`options` is {json.dumps(options)[:40]}, not an object)"
        )
    for key in ("max_queries", "max_query_tokens", "max_query_pieces"):
        value = options.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"{path}: not a stats.json (`options.{key}` is {value!r}, "
                "not a positive whole number)"
            )
    return stats
