"""Scoring a model on session pairs, the work behind `evaluate` and `compare` (wired to the
clients and trained models in mtn_keras/model_reports.py): a suggester over a suggest graph
or any batch call, perplexity, the anchors beside them, bootstrap groups and the overlap
warning."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mtn_keras.data.history import latest
from mtn_keras.data.padding import front_padded
from mtn_keras.data.pairs import pair_groups
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.rules import log_follows
from mtn_keras.scorecard import (
    Adj,
    CopyLast,
    History,
    batched,
    evaluate_suggesters,
    perplexity,
)
from mtn_keras.scorecard.anchors import BatchSuggester, Pair, Scored, reading_history
from mtn_keras.scorecard.list_measures import ListLog, anchor_figures
from mtn_keras.scorecard.quality import filtered

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from mtn_keras.data.vocab import Vocabulary

BOOTSTRAP_SEED = 0


def model_suggester(
    suggest_strings: Callable[..., Mapping[str, tf.Tensor]],
    k: int | None = None,
    history: bool = False,
) -> BatchSuggester:
    """A batch suggester over a suggest graph of a SuggestionService in this process (of the
    model in training, or of a run folder with its Keras model at hand): contexts -> lists of
    (text, score), the first `k` of each (default: all). With `history`, the graph is a
    `suggest_with_history` and the suggester reads the pairs' histories too."""
    import tensorflow as tf

    def call(contexts: list[list[str]], histories: list[list[str]] | None = None) -> list[Scored]:
        rows = [contexts] + ([] if histories is None else [histories])
        result = suggest_strings(*(tf.constant(front_padded(row), tf.string) for row in rows))
        texts, scores = np.asarray(result["suggestions"]), np.asarray(result["scores"])
        return [
            [(t.decode(), float(s)) for t, s in zip(row_t, row_s) if t]
            for row_t, row_s in zip(texts, scores)
        ]

    return suggester(call, k, history)


def suggester(
    call: Callable[..., list[Scored]], k: int | None = None, history: bool = False
) -> BatchSuggester:
    """A batch suggester over `call(contexts, histories=None)` -> each context's list of
    (text, score), best first: contexts -> the first `k` of each (default: all). With
    `history`, it reads the pairs' histories too (their `latest` queries)."""

    def suggest(contexts: list[list[str]]) -> list[Scored]:
        return [row[:k] for row in call(contexts)]

    def suggest_with_history(contexts: list[list[str]], histories: list[list[str]]) -> list[Scored]:
        return [row[:k] for row in call(contexts, [list(latest(h)) for h in histories])]

    if not history:
        return suggest
    return reading_history(suggest_with_history)


def prefix_sizes(text: str) -> tuple[int, ...]:
    """`2,4,6` -> (2, 4, 6): the characters typed, for argparse."""
    sizes = tuple(int(size) for size in text.split(","))
    if not sizes or min(sizes) < 1:
        raise ValueError(text)
    return sizes


def model_perplexity(
    model: keras.Model, sessions: list[list[str]], vocab: Vocabulary, batch_size: int = 64
) -> float:
    """exp of the mean next-query token NLL (teacher forced, copy head included)."""
    from mtn_keras.data.batches import SessionBatches

    total, count = 0.0, 0.0
    for x, y in SessionBatches(sessions, vocab, model.config.max_query_tokens, batch_size):
        nll, _, _, weight = model.token_losses(x, y, model(x, training=False))
        total += float((nll * weight).numpy().sum())
        count += float(weight.numpy().sum())
    return perplexity(total, count)


def bootstrap_groups(
    sessions: list[list[str]], users: list[str] | None, resamples: int
) -> tuple[list[str], dict[str, Any]]:
    """The unit each pair is resampled with (its user, or its session when `users` is None)
    and the report's `bootstrap` entry: resamples, seed, unit (`users` or `sessions`) and how
    many units (empty without resamples)."""
    groups = pair_groups(sessions, users)
    if not resamples:
        return groups, {}
    unit = "users" if users is not None else "sessions"
    entry = {"resamples": resamples, "seed": BOOTSTRAP_SEED, "unit": unit}
    return groups, {"bootstrap": entry | {"units": len(set(groups))}}


def bootstrap_line(report: Mapping[str, Any]) -> str | None:
    """One line that says what the intervals resampled, or None without intervals."""
    entry = report.get("bootstrap")
    if not entry:
        return None
    line = (
        f"[low, high]: 95% interval, bootstrap over the {entry['units']:,} evaluated "
        f"{entry['unit']} ({entry['resamples']:,} resamples, seed {entry['seed']})"
    )
    if entry["unit"] == "sessions":
        line += "; the dataset records no users (prepare it again to resample users)"
    return line


def score_with_anchors(
    name: str,
    pairs: list[Pair],
    suggesters: dict[str, BatchSuggester],
    train_sessions: list[list[str]] | None,
    k: int,
    batch_size: int,
    groups: Sequence[str] | None = None,
    resamples: int = 0,
    histories: list[list[str]] | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The scores of suggester `name` on `pairs` and, scored on the same pairs, those of the
    other `suggesters` and of the anchors (adj only with `train_sessions`, history only with
    `histories`, one per pair); with `resamples`, their intervals over the units of
    `groups`; with `train_sessions`, their `list_measures` and `name`'s `log_anchor`."""
    phrases = blocked_phrases()
    log = ListLog(train_sessions) if train_sessions else None
    suggesters["copy-last"] = batched(CopyLast(), k)
    if train_sessions:
        suggesters["adj"] = filtered(batched(Adj().fit(train_sessions), 4 * k), phrases, k)
    if histories is not None:
        suggesters["history"] = batched(History(), k)
    scores = evaluate_suggesters(
        pairs,
        suggesters,
        batch_size=batch_size,
        phrases=phrases,
        groups=groups,
        resamples=resamples,
        seed=BOOTSTRAP_SEED,
        histories=histories,
        follows=log_follows(train_sessions or []) if histories is not None else frozenset(),
        log=log,
    )
    if log is not None:
        scores[name]["log_anchor"] = anchor_figures(log, pairs, groups, resamples, BOOTSTRAP_SEED)
    anchors = {other: scores.pop(other) for other in list(scores) if other != name}
    return scores[name], anchors


def overlap_warning(
    sessions: list[list[str]],
    train_sessions: list[list[str]] | None,
    train_dir: str | None,
    share: float = 0.1,
) -> str | None:
    """A warning when more than `share` of the evaluated sessions are in the train split
    that fits adj (which then scores its own training pairs), else None."""
    if not sessions or not train_sessions:
        return None
    seen = set(map(tuple, train_sessions))
    found = sum(tuple(session) in seen for session in sessions)
    if found <= share * len(sessions):
        return None
    return (
        f"{found:,} of the {len(sessions):,} evaluated sessions are in the train split of "
        f"{train_dir}, which fits adj: its scores are inflated (pass the --train-data of "
        "the dataset the evaluated split comes from)"
    )
