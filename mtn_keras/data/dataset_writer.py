"""Writes the prepared dataset directory from query logs: the `prepare` command's work.

The directory (docs/contracts.md): train.tsv, valid.tsv, test.tsv (one session a line, its
queries TAB-separated, oldest first; under the `all` protocol one window of a session a
line), beside each its users file (train.users, valid.users, test.users: the user id of
each line of the .tsv, in its order, so that evaluation can resample users, and TAB, where
the line starts in its user's history), history.tsv (every user's queries in time order:
user, time, query; history.py), vocab.txt (from the training split only), evidence.tsv (the
queries that the log's clicks or an adult site's name call explicit: data/evidence.py) and
stats.json (its `evidence` counts them).
stats.json accounts for every row read:

    rows_read = rows_malformed + sum(dropped_rows.values()) + queries_kept

where `dropped_rows` counts the rows dropped at each step (page_through, empty_query,
consecutive_duplicate, then the rows of the sessions dropped as session_child_unsafe (a
query seeks sexual content involving minors: data/safety.py; counted before duplicates are
dropped), and the queries of those dropped as session_too_short,
session_too_long, session_long_query) and `dropped_sessions` those sessions. Each split has
its sessions, lines (sessions, or their windows under `all`), pairs (k-1 for a line of k
queries), queries (of its sessions, each once) and users. `queries_truncated` counts the
queries cut to `max_query_tokens` words (`all` only). `options.protocol` names the
protocol; `options.split_users` the validation and test users asked (instead of
`options.split`). `vocab_size` counts the four special tokens. With `subwords`, the
vocabulary is WordPiece pieces and `options.max_query_pieces` is the most pieces of a
training query (at most twice `max_query_tokens`): the query length the models are built for.
"""

import dataclasses
import json
import os
from typing import Any

from mtn_keras.base.outputs import OutputError, check_out_path, staged_directory
from mtn_keras.data.evidence import Evidence
from mtn_keras.data.history import write_history
from mtn_keras.data.logs import Tally, check_inputs
from mtn_keras.data.replay import Counting, count_logs, protocol_view
from mtn_keras.data.sessions import (
    SPLITS,
    Protocol,
    Session,
    split_sessions,
)
from mtn_keras.data.vocab import Vocabulary

ROW_DROPS = (
    "page_through",
    "empty_query",
    "consecutive_duplicate",
    "session_child_unsafe",
    "session_too_short",
    "session_too_long",
    "session_long_query",
)
SESSION_DROPS = ("child_unsafe", "too_short", "too_long", "long_query")
FILES = (
    tuple(f"{name}.tsv" for name in SPLITS)
    + tuple(f"{name}.users" for name in SPLITS)
    + ("history.tsv", "vocab.txt", "evidence.tsv", "stats.json")
)


class PrepareError(Exception):
    """The run cannot go on (output in the way, nothing left to write); nothing was written."""


def prepare(
    inputs: list[str],
    out: str,
    fmt: str = "aol",
    protocol: Protocol = Protocol(),
    min_count: int = 3,
    split: tuple[float, float, float] = (95, 2.5, 2.5),
    split_by: str = "session",
    seed: int = 0,
    force: bool = False,
    progress: bool | None = None,
    subwords: int = 0,
    split_users: tuple[int, int] | None = None,
    count: Counting = count_logs,
) -> dict[str, Any]:
    """Reads the logs, runs the session protocol and writes the directory `out`; returns stats.
    `subwords`: learn a WordPiece vocabulary of about this many tokens instead (0: words).
    `split_users` (valid, test): split by user with that many users with sessions in valid
    and test instead of `split`'s shares (see `split_sessions`). `count` runs the counting
    stages (data.replay.count_logs here, or on an engine: mtn_keras.cluster).

    Raises InputError (an unreadable log) or PrepareError before anything is written.
    """
    check_inputs(inputs)
    _check_out(out, force, inputs)
    tally, sessions, history, evidence = count(inputs, fmt, protocol, progress)
    if not sessions:
        raise PrepareError(f"no session left after filtering ({_why_none(tally)}); nothing written")
    try:
        splits = split_sessions(sessions, split, split_by, seed, tally.users, split_users)
    except ValueError as error:
        raise PrepareError(f"--split-users: {error}; nothing written") from None
    views = {name: protocol_view(kept, protocol) for name, kept in splits.items()}
    lines = {name: view.lines for name, view in views.items()}
    options = {
        "inputs": inputs,
        "format": fmt,
        "protocol": protocol.name,
        **{k: v for k, v in dataclasses.asdict(protocol).items() if k != "name"},
        "min_count": min_count,
        **({"split_users": list(split_users)} if split_users else {"split": list(split)}),
        "split_by": split_by,
        "seed": seed,
    }
    train_queries = [q for s in splits["train"] for q in s.queries]
    vocab, pieces = _vocabulary(train_queries, min_count, subwords, split, protocol)
    options |= pieces
    stats = _stats(tally, splits, lines, vocab, options) | {"evidence": evidence.counts()}
    users = {name: list(zip(view.users, view.starts)) for name, view in views.items()}
    _write(out, lines, users, history, vocab, stats, evidence.kept())
    return stats


def _vocabulary(
    train_queries: list[str],
    min_count: int,
    subwords: int,
    split: tuple[float, float, float],
    protocol: Protocol,
) -> tuple[Vocabulary, dict[str, int]]:
    """The training split's vocabulary: words seen `min_count` times, or with `subwords`
    WordPiece pieces; and the options that the pieces add (none for words)."""
    if not subwords:
        return Vocabulary.from_sessions([train_queries], min_count), {}
    if not train_queries:
        raise PrepareError(
            f"--subwords {subwords}: the train split holds no query to learn "
            f"pieces from (--split {'/'.join(f'{x:g}' for x in split)}); "
            "nothing written"
        )
    vocab = Vocabulary.from_pieces([train_queries], subwords)
    longest = max(len(vocab.split(q)) for q in train_queries)
    return vocab, {
        "subwords": subwords,
        "max_query_pieces": min(longest, 2 * protocol.max_query_tokens),
    }


def unaccounted_rows(stats: dict[str, Any]) -> int:
    """Rows read that no count explains (0 when the accounting holds)."""
    dropped = sum(stats["dropped_rows"].values())
    return stats["rows_read"] - stats["rows_malformed"] - dropped - stats["queries_kept"]


def format_stats(stats: dict[str, Any]) -> str:
    """stats.json as text: the paper's Table 1 (sessions, unrolled query pairs), the accounting."""
    splits, options = stats["splits"], stats["options"]
    protocol = options.get("protocol", "paper")
    lines = [f"protocol {protocol}", f"{'':<12}{'Sessions':>12}{'Unrolled Query Pairs':>24}"]
    for name, label in zip(SPLITS, ("Training", "Validation", "Test")):
        lines.append(f"{label:<12}{splits[name]['sessions']:>12,}{splits[name]['pairs']:>24,}")
    total_sessions = sum(split["sessions"] for split in splits.values())
    total_pairs = sum(split["pairs"] for split in splits.values())
    lines.append(f"{'Total':<12}{total_sessions:>12,}{total_pairs:>24,}")
    users = [f"{splits[name].get('users', 0):,} {name}" for name in SPLITS]
    asked = options.get("split_users")
    lines += [
        f"users: {', '.join(users)}" + (f" (--split-users {asked[0]},{asked[1]})" if asked else ""),
        "",
    ]
    if protocol == "all":
        total_lines = sum(split["lines"] for split in splits.values())
        lines += [
            f"{total_lines:,} windows of at most {options['max_queries']} queries; "
            f"{stats['queries_truncated']:,} queries cut to "
            f"{options['max_query_tokens']} tokens",
            "",
        ]
    lines += _accounting(stats)
    if stats["malformed_examples"]:
        lines += ["", "first malformed rows:"] + [f"  {e}" for e in stats["malformed_examples"]]
    return "\n".join(lines)


def _accounting(stats: dict[str, Any]) -> list[str]:
    """format_stats' accounting: every row read, where it went, and the vocabulary size."""
    options = stats["options"]
    labels = {
        "page_through": "page-throughs (no query)",
        "empty_query": "empty after normalising",
        "consecutive_duplicate": "consecutive duplicates",
        "session_child_unsafe": "in sessions seeking sexual content involving minors",
        "session_too_short": f"in sessions of < {options['min_queries']} queries",
        "session_too_long": f"in sessions of > {options['max_queries']} queries",
        "session_long_query": f"in sessions with a query of > {options['max_query_tokens']} tokens",
    }
    lines = [_row("rows read", stats["rows_read"])]
    lines.append(_row("  malformed", stats["rows_malformed"]))
    lines += [_row(f"    {reason}", n) for reason, n in stats["malformed_reasons"].items()]
    lines += [_row(f"  {labels[key]}", stats["dropped_rows"][key]) for key in ROW_DROPS]
    lines.append(_row("  kept in sessions", stats["queries_kept"]))
    gap = unaccounted_rows(stats)
    lines.append(_row("  unaccounted", gap) + ("" if gap == 0 else "  (!)"))
    if options.get("subwords"):
        lines += [
            "",
            _row(
                f"WordPiece vocabulary (training split, asked {options['subwords']:,})",
                stats["vocab_size"],
            ),
            _row("  longest training query, pieces", options["max_query_pieces"]),
        ]
    else:
        lines += [
            "",
            _row(
                f"vocabulary (training split, min count {options['min_count']})",
                stats["vocab_size"],
            ),
        ]
    return lines


def _row(label: str, value: int) -> str:
    """One line of the accounting: a label and a count, aligned."""
    return f"{label:<52}{value:>12,}"


def _check_out(out: str, force: bool, inputs: list[str]) -> None:
    """Raises PrepareError if `out` cannot be written: a file or under one, a link (replacing
    the dataset renames `out`, which would put a folder in the link's place), holding an
    input, not empty without force, or (with force) holding files that are not a prepared
    dataset."""
    if os.path.islink(os.path.normpath(out)):  # `link/` too
        raise PrepareError(
            f"--out {out} is a link (to {os.path.realpath(out)}): give the folder itself"
        )
    try:
        check_out_path(out)
    except OutputError as error:
        raise PrepareError(str(error)) from None
    where = os.path.realpath(out)
    for path in inputs:
        if os.path.commonpath([where, os.path.realpath(path)]) == where:
            raise PrepareError(f"--out {out} holds the input {path}; choose another --out")
    if not os.path.isdir(out) or not os.listdir(out):
        return
    if not force:
        raise PrepareError(f"--out {out} exists and is not empty; use --force to overwrite it")
    others = sorted(set(os.listdir(out)) - set(FILES))
    if others:
        raise PrepareError(
            f"--out {out} holds files that are not a prepared dataset ({', '.join(others[:3])}"
            f"{', ...' if len(others) > 3 else ''}); --force replaces only a prepared dataset"
        )


def _why_none(tally: Tally) -> str:
    """What became of the rows when no session is left: the counts, and the likely cause."""
    counts = tally.counts
    parts = [f"{counts['rows_read']:,} rows read", f"{counts['rows_malformed']:,} malformed"]
    dropped = [f"{key} {counts[key]:,}" for key in ROW_DROPS if counts[key]]
    if dropped:
        parts.append("dropped rows: " + ", ".join(dropped))
    if counts["users_not_contiguous"]:
        parts.append(
            f"the rows of {counts['users_not_contiguous']:,} users come back after other "
            "users' rows: the log must be grouped by user (sort it by user id, stably)"
        )
    return "; ".join(parts)


def _stats(
    tally: Tally,
    splits: dict[str, list[Session]],
    lines: dict[str, list[list[str]]],
    vocab: Vocabulary,
    options: dict[str, Any],
) -> dict[str, Any]:
    """The stats.json content (see the module docstring)."""
    counts = tally.counts
    return {
        "rows_read": counts["rows_read"],
        "rows_malformed": counts["rows_malformed"],
        "malformed_reasons": dict(tally.malformed_reasons),
        "malformed_examples": tally.malformed_examples,
        "header_lines": counts["header_lines"],
        "rows_out_of_order": counts["rows_out_of_order"],
        "users": counts["users"],
        "users_not_contiguous": counts["users_not_contiguous"],
        "dropped_rows": {key: counts[key] for key in ROW_DROPS},
        "dropped_sessions": {key: counts["sessions_" + key] for key in SESSION_DROPS},
        "queries_kept": counts["queries_kept"],
        "queries_truncated": counts["queries_truncated"],
        "vocab_size": len(vocab),
        "splits": {
            name: {
                "sessions": len(sessions),
                "lines": len(lines[name]),
                "pairs": sum(len(line) - 1 for line in lines[name]),
                "queries": sum(len(s.queries) for s in sessions),
                "users": len({s.user for s in sessions}),
            }
            for name, sessions in splits.items()
        },
        "options": options,
    }


def _write(
    out: str,
    lines: dict[str, list[list[str]]],
    users: dict[str, list[tuple[str, int]]],
    history: list[tuple[str, int, str]],
    vocab: Vocabulary,
    stats: dict[str, Any],
    evidence: Evidence,
) -> None:
    """Writes the directory into a temporary sibling, then renames it to `out` (replacing it)."""
    with staged_directory(out, "prepare") as temp:
        for name, queries in lines.items():
            with open(os.path.join(temp, f"{name}.tsv"), "w", encoding="utf-8") as file:
                file.writelines("\t".join(line) + "\n" for line in queries)
            with open(os.path.join(temp, f"{name}.users"), "w", encoding="utf-8") as file:
                file.writelines(f"{user}\t{start}\n" for user, start in users[name])
        write_history(os.path.join(temp, "history.tsv"), history)
        vocab.save(os.path.join(temp, "vocab.txt"))
        evidence.save(temp)
        with open(os.path.join(temp, "stats.json"), "w", encoding="utf-8") as file:
            json.dump(stats, file, indent=2)
            file.write("\n")
