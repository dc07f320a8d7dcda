"""Scoring completions (`evaluate --prefix`): the first characters of the real next query are
typed, and SR@5 and MRR@5 say how often the query is among the five completions shown; beside
them the most popular completion anchor (MPC) on the same pairs, with and without the
session's own queries, with the users' histories also `complete_with_history` and the
history-then-MPC anchor, and every figure's 95% interval from a bootstrap over users."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mtn_keras.data.pairs import pair_groups, pair_histories, session_pairs
from mtn_keras.ranking.rules import log_follows
from mtn_keras.scorecard.anchors import Pair
from mtn_keras.scorecard.bootstrap import ratio_intervals
from mtn_keras.scorecard.completion_anchors import FuzzyMPC, HistoryThenMPC, MostPopularCompletion
from mtn_keras.scorecard.list_measures import ListLog, add_list_measures, anchor_figures
from mtn_keras.scorecard.metrics import mean_reciprocal_rank, success_rate
from mtn_keras.scorecard.report import _cell, split_by_history
from mtn_keras.scorecard.typos import nonword_share, slipped_prefixes, slipped_sessions

if TYPE_CHECKING:
    from mtn_keras.data.history import PairHistories

FIRST_QUERY_CHARS = 4  # typed of a session's first query, after an empty session
NOT_CASES = ("bootstrap", "log_anchor")  # the report's entries that are not a case

# A batch completer: (contexts, prefixes[, histories]) -> each row's list of texts, best first.
Completer = Callable[..., list[list[str]]]
# A case of `completion_cases`: (pairs, typed prefixes, units, histories or None).
Case = tuple[list[Pair], list[str], list[str], list[list[str]] | None]


def completion_cases(
    sessions: list[list[str]],
    users: list[str] | None = None,
    chars: Sequence[int] = (2, 4, 6),
    histories: PairHistories | None = None,
    typos: bool = False,
) -> dict[str, Case]:
    """The cases of `evaluate --prefix`, name -> (pairs, typed prefixes, units, histories):
    every pair with the first `chars` characters of its next query typed (with `typos`, the
    same pairs again typed with one seeded slip, scorecard.typos, and the pairs with nothing
    typed, their last session query as typed and with one slip), and each session's first
    query with its first FIRST_QUERY_CHARS typed after an empty session. The units (users,
    else sessions) are what the bootstrap resamples; the histories (each case's rows'
    earlier queries) are None without the sessions' `histories` (one per session).
    Raises ValueError for a size no next query is longer than (every one typed whole)."""
    pairs = session_pairs(sessions)
    longest = max((len(query) for _, query in pairs), default=0)
    if too_long := [size for size in chars if size >= longest]:
        raise ValueError(
            f"--prefix {too_long[0]}: no next query is longer than {longest} characters, so it "
            "would be typed whole, not completed"
        )
    groups = pair_groups(sessions, users)
    earlier = pair_histories(sessions, histories) if histories is not None else None
    cases: dict[str, Case] = {}
    for size in chars:
        cases[f"{size} characters"] = (pairs, [q[:size] for _, q in pairs], groups, earlier)
        if typos and size >= 3:
            slips = slipped_prefixes([q for _, q in pairs], size)
            cases[f"{size} characters, one slip"] = (pairs, slips, groups, earlier)
    if typos:
        nothing = [""] * len(pairs)
        cases["nothing typed"] = (pairs, nothing, groups, earlier)
        cases["nothing typed, last query with one slip"] = (
            slipped_sessions(pairs),
            nothing,
            groups,
            earlier,
        )
    units = users if users is not None else [str(i) for i in range(len(sessions))]
    firsts: list[Pair] = [([], session[0]) for session in sessions]
    cases[f"first query, {FIRST_QUERY_CHARS} characters, empty session"] = (
        firsts,
        [query[:FIRST_QUERY_CHARS] for _, query in firsts],
        units,
        [histories[i] for i in range(len(sessions))] if histories is not None else None,
    )
    return cases


def completion_report(
    complete: Completer,
    name: str,
    sessions: list[list[str]],
    train_sessions: list[list[str]],
    users: list[str] | None = None,
    chars: Sequence[int] = (2, 4, 6),
    k: int = 5,
    batch_size: int = 64,
    resamples: int = 1000,
    seed: int = 0,
    histories: PairHistories | None = None,
    complete_with_history: Completer | None = None,
    typos: bool = False,
    every: int = 1,
) -> dict[str, Any]:
    """Case -> suggester -> {pairs, sr@5, mrr@5, nonwords and with `resamples` the `_ci` of
    the first two} for the model's `complete(contexts, prefixes) -> lists of texts` (row
    `name`), MPC, MPC without the session's queries and fuzzy MPC, all on the same pairs;
    `nonwords` is the share of shown items holding a word that neither the training log nor
    the user's own queries (the session's and the history's) hold. With `typos`, each case
    again with one slip in what was typed. With the sessions' `histories` (each session's
    user's earlier queries) and `complete_with_history(contexts, prefixes, histories)`, also
    "NAME + history" and the history-then-MPC anchor, and every row's figures split into
    repeat and new pairs (report.split_by_history). Every row also has its `list_measures`
    and the report a `log_anchor` per case (scorecard.list_measures). With `every` above 1,
    each case's every `every`-th row only."""
    mpc = MostPopularCompletion().fit(train_sessions)
    log = ListLog(train_sessions)
    known = {word for query in mpc.counts for word in query.split()}
    follows = log_follows(train_sessions) if histories is not None else frozenset()
    report: dict[str, dict[str, Any]] = {}
    anchors: dict[str, dict[str, Any]] = {}
    cases = completion_cases(sessions, users, chars, histories, typos)
    for case, columns in cases.items():
        pairs, prefixes, groups, earlier = columns
        pairs, prefixes, groups = pairs[::every], prefixes[::every], groups[::every]
        earlier = earlier if earlier is None else earlier[::every]
        contexts = [context for context, _ in pairs]
        own = contexts if earlier is None else [c + e for c, e in zip(contexts, earlier)]
        lists = model_lists(
            complete, complete_with_history, name, batch_size, contexts, prefixes, earlier
        )
        lists |= anchor_lists(mpc, contexts, prefixes, earlier, k, typos)
        report[case] = {
            row: case_scores(found, pairs, groups, k, resamples, seed)
            | {"nonwords": 100 * nonword_share(found, known, own)}
            for row, found in lists.items()
        }
        if earlier is not None:
            split_by_history(
                report[case], lists, pairs, earlier, follows, groups, resamples, seed, prefixes
            )
        readers = {f"{name} + history", "history then MPC"}
        add_list_measures(
            report[case], lists, pairs, log, groups, resamples, seed, earlier, readers, prefixes
        )
        anchors[case] = anchor_figures(log, pairs, groups, resamples, seed, prefixes)
    return report | {"log_anchor": anchors}


def model_lists(
    complete: Completer,
    complete_with_history: Completer | None,
    name: str,
    batch_size: int,
    contexts: list[list[str]],
    prefixes: list[str],
    earlier: list[list[str]] | None,
) -> dict[str, list[list[str]]]:
    """The model's completions of each row (row `name`) and, with the rows' histories
    (`earlier`), those of `complete_with_history` too (row "NAME + history")."""
    lists = {name: in_batches(complete, batch_size, contexts, prefixes)}
    if earlier is not None:
        if complete_with_history is None:
            raise ValueError("histories to score need a complete_with_history")
        lists[f"{name} + history"] = in_batches(
            complete_with_history, batch_size, contexts, prefixes, earlier
        )
    return lists


def in_batches(complete: Completer, batch_size: int, *columns: Sequence[object]) -> list[list[str]]:
    """`complete(*columns)`'s lists, asked `batch_size` rows of the `columns` at a time."""
    lists: list[list[str]] = []
    for start in range(0, len(columns[0]), batch_size):
        lists += complete(*(column[start : start + batch_size] for column in columns))
    return lists


def anchor_lists(
    mpc: MostPopularCompletion,
    contexts: list[list[str]],
    prefixes: list[str],
    earlier: list[list[str]] | None,
    k: int,
    fuzzy: bool = False,
) -> dict[str, list[list[str]]]:
    """The anchors' k completions of each row: MPC, MPC without the session's queries, with
    `fuzzy` fuzzy MPC and, with the rows' histories (`earlier`), the history then MPC."""
    lists = {
        "MPC": [mpc.complete(prefix, k) for prefix in prefixes],
        "MPC without the session's queries": [
            mpc.complete(prefix, k, set(context)) for context, prefix in zip(contexts, prefixes)
        ],
    }
    if fuzzy:
        lists["fuzzy MPC"] = [FuzzyMPC(mpc).complete(prefix, k) for prefix in prefixes]
    if earlier is not None:
        own = HistoryThenMPC(mpc)
        lists["history then MPC"] = [
            own.complete(prefix, list(history), k) for prefix, history in zip(prefixes, earlier)
        ]
    return lists


def case_scores(
    found: list[list[str]],
    pairs: list[Pair],
    groups: Sequence[str],
    k: int,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """{pairs, sr@5, mrr@5, and with `resamples` their `_ci`} of the lists `found` for the
    (context, next query) `pairs`, resampled over the `groups` (users)."""
    references = [reference for _, reference in pairs]
    scores: dict[str, Any] = {
        "pairs": len(pairs),
        "sr@5": success_rate(found, references, k),
        "mrr@5": mean_reciprocal_rank(found, references, k),
    }
    if resamples and pairs:
        intervals = ratio_intervals(found, pairs, groups, resamples, seed)
        scores |= {f"{key}_ci": intervals[f"{key}_ci"] for key in ("sr@5", "mrr@5")}
    return scores


def case_rows(report: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The report's cases (case -> rows), without its `bootstrap` and `log_anchor`."""
    return {case: rows for case, rows in report.items() if case not in NOT_CASES}


def completion_table(report: Mapping[str, Any]) -> str:
    """The report of `completion_report` as a markdown table: one row per case and
    suggester, SR@5 and MRR@5 with their intervals; with histories, SR@5 on repeat and new
    pairs, the difference on new pairs and the unrelated history items too."""
    report = case_rows(report)
    split = any("history_split" in row for rows in report.values() for row in rows.values())
    head = "| Typed | Suggester | Pairs | SR@5 | MRR@5 | Non-words shown |"
    rule = "| --- | --- | ---: | ---: | ---: | ---: |"
    if split:
        head += " SR@5 repeat | SR@5 new | New: with − without | Unrelated history |"
        rule += " ---: | ---: | ---: | ---: |"
    lines = [head, rule]
    for case, rows in report.items():
        for name, row in rows.items():
            cells = [_cell(row[key], row.get(f"{key}_ci")) for key in ("sr@5", "mrr@5")]
            cells.append(_cell(row["nonwords"]))
            if parts := row.get("history_split"):
                difference = parts.get("new_difference")
                cells += [
                    _cell(parts["repeat"]["sr@5"], parts["repeat"]["sr@5_ci"]),
                    _cell(parts["new"]["sr@5"], parts["new"]["sr@5_ci"]),
                    _cell(difference["difference"], difference["ci"]) if difference else "",
                    _cell(parts["unrelated_history"]),
                ]
            lines.append(f"| {case} | {name} | {row['pairs']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
