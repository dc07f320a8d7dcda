"""Users' histories: every query a user typed, in time order, as `prepare` keeps them
(history.tsv: user, time, query), and where each line of a split starts in its user's
history (the .users files' second column). A pair's history, what its user typed before
its session, is a slice of one list per user, never a copy per pair; for training, a slice
of rows of one encoded matrix of every user's queries (`LineHistories`)."""

import os
from collections.abc import Iterable
from datetime import datetime
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from mtn_keras.data.vocab import Vocabulary

HISTORY_SIZE = 200  # the latest earlier queries a serving graph reads (HistoryLookup)


def latest(history: list[str], size: int = HISTORY_SIZE, end: int | None = None) -> list[str]:
    """The last `size` entries of `history` (of those before position `end` when given),
    oldest first: what a model and a ranker read of a user's history (a slice, no copy of
    a numpy array). Its graph form is ranking.history_lookup.latest."""
    end = len(history) if end is None else end
    return history[max(0, end - size) : end]


def write_history(path: str, rows: list[tuple[str, int, str]]) -> None:
    """Write (user, time, query) rows, one a line, TAB-separated."""
    with open(path, "w", encoding="utf-8") as file:
        file.writelines(f"{user}\t{time}\t{query}\n" for user, time, query in rows)


def load_history(directory: str) -> dict[str, list[str]] | None:
    """Each user's queries, oldest first, from a prepared directory's history.tsv; None for
    a dataset prepared before histories were kept. Raises ValueError naming the file and
    line of a malformed line."""
    path = os.path.join(directory, "history.tsv")
    if not os.path.isfile(path):
        return None
    users: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                raise ValueError(f"{path}:{number}: expected user, time and query, TAB-separated")
            users.setdefault(fields[0], []).append(fields[2])
    return users


def load_starts(directory: str, name: str) -> list[int] | None:
    """Where each line of a split starts in its user's history; None for a dataset prepared
    before histories were kept."""
    path = os.path.join(directory, f"{name}.users")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as file:
        fields = [line.split("\t") for line in file.read().splitlines()]
    if not fields or len(fields[0]) < 2:
        return None
    return [int(field[1]) for field in fields]


class PairHistories:
    """The history of each line of a split: its user's queries before the line starts (the
    last `size`), oldest first.

    Args:
        histories: each user's queries (`load_history`).
        users, starts: each line's user and start (`load_users`, `load_starts`).
        size: at most this many earlier queries per line.
    """

    def __init__(
        self,
        histories: dict[str, list[str]],
        users: list[str],
        starts: list[int],
        size: int = HISTORY_SIZE,
    ) -> None:
        self.histories, self.users, self.starts, self.size = histories, users, starts, size

    def __len__(self) -> int:
        return len(self.users)

    def __getitem__(self, line: int) -> list[str]:
        return latest(self.histories[self.users[line]], self.size, self.starts[line])

    @classmethod
    def load(cls, directory: str, name: str, size: int = HISTORY_SIZE) -> "PairHistories | None":
        """The histories of a prepared split; None if the dataset has none. Raises ValueError
        naming the first user of the split that history.tsv does not hold."""
        from mtn_keras.data.prepared import load_users

        histories, starts = load_history(directory), load_starts(directory, name)
        if histories is None or starts is None:
            return None
        users = load_users(directory, name)
        assert users is not None, "`starts` came of the .users file, so `users` did too"
        for number, user in enumerate(users, 1):
            if user not in histories:
                raise ValueError(
                    f"{os.path.join(directory, 'history.tsv')} holds no query of user {user} "
                    f"({name}.users line {number}): prepare the dataset again"
                )
        return cls(histories, users, starts, size)


def read_history(path: str, user: str | None = None, fmt: str = "aol") -> list[str]:
    """A user's earlier queries, oldest first: those of a history file (`history_file`), or
    with `user` that user's queries in a log of `fmt`, normalised, in time order, consecutive
    duplicates dropped. Raises InputError (no regular file, an unreadable one, or one not in
    the format) or ValueError (a user the log does not hold)."""
    from mtn_keras.data.logs import Tally, check_inputs, read_log
    from mtn_keras.data.sessions import user_queries

    check_inputs([path], "--history")
    if user is None:
        return history_file(path)
    tally = Tally()
    for who, timed in user_queries(read_log(path, fmt, tally, False), tally):
        if who == user:
            queries = [query for _, query in sorted(timed, key=itemgetter(0))]
            return [q for i, q in enumerate(queries) if i == 0 or q != queries[i - 1]]
    raise ValueError(f"{path}: no query of user {user}")


# The bounds of a history file and of the app's export: no query a person types comes near
# the line's, nor a lifetime of them the file's; what passes them is no history.
HISTORY_LINE_BYTES = 1 << 16
HISTORY_FILE_BYTES = 1 << 28


def history_file(path: str) -> list[str]:
    """The queries of a history file, in file order: one a line, or `query TAB time` as
    `mtn-tui --export-history` writes them; empty lines skipped. Raises InputError, with how
    many lines were not text or not in the format and the first, rather than read them as
    queries; and for a line or a file past its bound (HISTORY_LINE_BYTES,
    HISTORY_FILE_BYTES)."""
    from mtn_keras.base.files import InputError, bounded_lines

    queries, bad, first, number = [], 0, "", 0
    for number, raw in bounded_lines(path, HISTORY_LINE_BYTES, HISTORY_FILE_BYTES):
        try:
            fields = raw.decode("utf-8").split("\t")
        except UnicodeDecodeError:
            fields = None
        if fields is None or "\x00" in fields[0]:
            why = "not UTF-8 text" if fields is None else "a NUL byte: not text"
        elif len(fields) == 1 or (len(fields) == 2 and _is_time(fields[1])):
            if fields[0].strip():
                queries.append(fields[0].strip())
            continue
        else:
            why = "TAB-separated, but not query TAB time"
        bad += 1
        first = first or f"line {number}: {why}"
    if bad:
        raise InputError(
            f"{path}: {bad} of {number} lines are not history, the first at {first}; a "
            "history file holds one query a line, or query TAB time (mtn-tui "
            "--export-history); an AOL-format log needs --user"
        )
    return queries


def _is_time(text: str) -> bool:
    """Whether `text` is a time as the AOL log and the app's export write it."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


class LineHistories(NamedTuple):
    """What a split's lines read of their users' histories, without a copy per line: every
    user's queries encoded once, user after user, oldest first, `tokens` (R, n) int32, and
    per line the rows [lo, hi) of its user's queries before it, `bounds` (L, 2) int64; a
    line reads the last `size` of its rows."""

    tokens: np.ndarray
    bounds: np.ndarray
    size: int


def encode_histories(
    histories: dict[str, list[str]], vocab: Vocabulary, max_tokens: int
) -> tuple[np.ndarray, dict[str, int]]:
    """Every user's queries as token ids (R, n) int32, 0-padded (each query cut to
    `max_tokens` tokens, unknown words `<unk>`), and the row each user's queries start at."""
    queries = [query for user_queries in histories.values() for query in user_queries]
    tokens = np.zeros((len(queries), max_tokens), dtype=np.int32)
    ids: dict[str, list[int]] = {}  # a query typed again is encoded once
    for row, query in enumerate(queries):
        if query not in ids:
            ids[query] = vocab.encode(vocab.split(query)[:max_tokens])
        tokens[row, : len(ids[query])] = ids[query]
    first_rows = np.cumsum([0] + [len(user_queries) for user_queries in histories.values()])
    return tokens, dict(zip(histories, first_rows[:-1].tolist()))


def split_histories(
    directory: str, names: Iterable[str], vocab: Vocabulary, max_tokens: int, size: int
) -> dict[str, LineHistories]:
    """The `LineHistories` of each named split of a prepared directory, sharing one encoded
    matrix. Raises ValueError when the dataset was prepared before histories were kept."""
    from mtn_keras.data.prepared import load_users

    histories = load_history(directory)
    if histories is None:
        raise ValueError(f"{directory} has no history.tsv: prepare the dataset again")
    tokens, first_rows = encode_histories(histories, vocab, max_tokens)
    found = {}
    for name in names:
        users, starts = load_users(directory, name), load_starts(directory, name)
        if users is None or starts is None:
            raise ValueError(f"{directory}/{name}.users has no starts: prepare the dataset again")
        lo = np.array([first_rows[user] for user in users], dtype=np.int64)
        bounds = np.stack([lo, lo + np.array(starts, dtype=np.int64)], axis=1)
        found[name] = LineHistories(tokens, bounds, size)
    return found
