"""What the shown lists hold beyond their hits: the share of items grounded in what
someone typed (scorecard.grounding), the share of lists with nothing typed that hold a filler
item, SR@5 by the kind of pair (the next query repeats the session, is new and shares a word
with it, or is new and shares none) and, on related-new pairs, how often a list brings a word
of the next query that the session lacks, beside the log anchor (anchors.LogAnchor) on the
same pairs. Each figure is a ratio of sums over pairs, with its interval from the bootstrap
over users (bootstrap.UserResamples)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from mtn_keras.scorecard.anchors import LogAnchor, Pair
from mtn_keras.scorecard.bootstrap import UserResamples
from mtn_keras.scorecard.grounding import LogPhrases, grounded, session_words, typed_words
from mtn_keras.scorecard.quality import is_new

K = 5
KINDS = ("repeat", "related-new", "unrelated-new")
REPEAT, RELATED_NEW, UNRELATED_NEW = range(len(KINDS))


class ListLog:
    """What the measures read of the training log (its sessions), built once: its phrases
    (grounding), its (query, next query) pairs (filler lists) and the log anchor."""

    def __init__(self, train_sessions: list[list[str]]) -> None:
        self.phrases = LogPhrases(query for session in train_sessions for query in session)
        self.follows = {pair for session in train_sessions for pair in zip(session, session[1:])}
        self.anchor = LogAnchor().fit(train_sessions)


def pair_kind(context: list[str], query: str) -> int:
    """The index in KINDS of the pair's kind: `repeat` (quality.is_new says the next query is
    not new), `related-new` (new, sharing a word with the session) or `unrelated-new`."""
    if not is_new(query, context):
        return REPEAT
    return RELATED_NEW if session_words(context) & set(query.split()) else UNRELATED_NEW


def pair_kinds(pairs: list[Pair]) -> np.ndarray:
    """[pairs] int: pair_kind of each (context, next query) pair."""
    return np.array([pair_kind(context, query) for context, query in pairs], dtype=np.int64)


def hits(lists: list[list[str]], pairs: list[Pair]) -> np.ndarray:
    """[pairs] float: 1.0 where the first K items hold the next query."""
    return np.array([query in texts[:K] for texts, (_, query) in zip(lists, pairs)], np.float64)


def new_word_hits(lists: list[list[str]], pairs: list[Pair]) -> np.ndarray:
    """[pairs] float: 1.0 where the first K items hold a word of the next query that no query
    of the session holds."""
    rows = []
    for texts, (context, query) in zip(lists, pairs):
        new = set(query.split()) - session_words(context)
        rows.append(any(new & set(text.split()) for text in texts[:K]))
    return np.array(rows, dtype=np.float64)


def is_filler(texts: list[str], context: list[str], follows: AbstractSet[tuple[str, str]]) -> bool:
    """The list's first K hold an item that shares no word with the session and came right
    after none of its queries in the log (`follows`: the log's (query, next query) pairs)."""
    words = session_words(context)
    return any(
        not words & set(text.split()) and not any((query, text) in follows for query in context)
        for text in texts[:K]
    )


def grounded_items(
    lists: list[list[str]],
    pairs: list[Pair],
    phrases: LogPhrases,
    histories: Sequence[Sequence[str]] | None = None,
    prefixes: list[str] | None = None,
) -> np.ndarray:
    """Per pair: (grounded items, shown items) of its first K, int (pairs, 2). The person's
    own phrases (the session's and, with `histories`, the history's) and typed words (the
    session's and the finished ones of `prefixes`) are read only for an item the log
    (`phrases`) does not ground."""
    histories = histories or [()] * len(pairs)
    prefixes = prefixes or [""] * len(pairs)
    rows = []
    for texts, (context, _), history, prefix in zip(lists, pairs, histories, prefixes):
        own = None
        count = 0
        for text in texts[:K]:
            found = grounded(text, phrases)
            if not found:
                own = own or (LogPhrases([*context, *history]), typed_words(context, prefix))
                found = grounded(text, phrases, *own)
            count += found
        rows.append((count, len(texts[:K])))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def figure(
    name: str, numerators: np.ndarray, denominators: np.ndarray, resampled: UserResamples
) -> dict[str, Any]:
    """{name: 100 * sum(numerators) / sum(denominators) (0 when nothing counts), and with
    resamples `name_ci`, its 95% interval}."""
    num, den = float(np.sum(numerators)), float(np.sum(denominators))
    out: dict[str, Any] = {name: 100.0 * num / den if den else 0.0}
    if resampled.counts is not None:
        out[f"{name}_ci"] = resampled.interval(numerators, denominators)
    return out


def kind_figures(
    lists: list[list[str]], pairs: list[Pair], kinds: np.ndarray, resampled: UserResamples
) -> dict[str, dict[str, Any]]:
    """Per kind of pair: its pairs and SR@5; on related-new pairs also the new-word hit@5."""
    hit = hits(lists, pairs)
    out: dict[str, dict[str, Any]] = {}
    for code, name in enumerate(KINDS):
        mask = (kinds == code).astype(np.float64)
        out[name] = {"pairs": int(mask.sum())} | figure("sr@5", hit * mask, mask, resampled)
    related = (kinds == RELATED_NEW).astype(np.float64)
    new = new_word_hits(lists, pairs) * related
    out["related-new"] |= figure("new_word_hit@5", new, related, resampled)
    return out


def list_figures(
    lists: list[list[str]],
    pairs: list[Pair],
    log: ListLog,
    kinds: np.ndarray,
    resampled: UserResamples,
    histories: Sequence[Sequence[str]] | None = None,
    prefixes: list[str] | None = None,
) -> dict[str, Any]:
    """One row's measures: `shown` items, `grounded` (percent of items), `filler` (percent
    of lists; only when nothing was typed) and `pair_kinds` (kind_figures)."""
    items = grounded_items(lists, pairs, log.phrases, histories, prefixes)
    out = {"shown": int(items[:, 1].sum())} | figure(
        "grounded", items[:, 0], items[:, 1], resampled
    )
    if not any(prefix.strip() for prefix in prefixes or ()):
        filler = [
            is_filler(texts, context, log.follows) for texts, (context, _) in zip(lists, pairs)
        ]
        out |= figure("filler", np.array(filler, np.float64), np.ones(len(pairs)), resampled)
    return out | {"pair_kinds": kind_figures(lists, pairs, kinds, resampled)}


def add_list_measures(
    results: dict[str, dict[str, Any]],
    shown: dict[str, list[list[str]]],
    pairs: list[Pair],
    log: ListLog,
    groups: Sequence[str] | None,
    resamples: int,
    seed: int,
    histories: Sequence[Sequence[str]] | None = None,
    readers: Collection[str] = (),
    prefixes: list[str] | None = None,
) -> None:
    """Adds `list_measures` (list_figures) to the result of each row of `shown` (name -> its
    lists) on `pairs`, what was typed being `prefixes` (None: nothing); the rows named in
    `readers` read the pairs' `histories`, which then ground their items too."""
    kinds = pair_kinds(pairs)
    resampled = UserResamples(groups or range(len(pairs)), resamples, seed)
    for name, lists in shown.items():
        history = histories if name in readers else None
        results[name]["list_measures"] = list_figures(
            lists, pairs, log, kinds, resampled, history, prefixes
        )


def anchor_figures(
    log: ListLog,
    pairs: list[Pair],
    groups: Sequence[str] | None,
    resamples: int,
    seed: int,
    prefixes: list[str] | None = None,
) -> dict[str, Any]:
    """The log anchor's pairs, SR@5 and new-word hit@5 on the related-new `pairs`, its lists
    completing what was typed (`prefixes`)."""
    kinds = pair_kinds(pairs)
    prefixes = prefixes or [""] * len(pairs)
    lists = [
        [text for text, _ in log.anchor.suggest(context, K, prefix)] if kind == RELATED_NEW else []
        for (context, _), kind, prefix in zip(pairs, kinds, prefixes)
    ]
    resampled = UserResamples(groups or range(len(pairs)), resamples, seed)
    return kind_figures(lists, pairs, kinds, resampled)["related-new"]
