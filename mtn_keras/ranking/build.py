"""Building a model's ranking: the index from the training split, the ranker fitted on the
candidates of the validation split (with and without typed prefixes, each with its user's
earlier queries), the threshold tuned there too."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from mtn_keras.data.history import HISTORY_SIZE, PairHistories, latest
from mtn_keras.data.padding import front_padded
from mtn_keras.data.pairs import session_pairs
from mtn_keras.ranking import Ranking
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.features import FEATURES
from mtn_keras.ranking.fitting_data import RankingData
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.ranker import choose_threshold, fit_ranker, threshold_curve
from mtn_keras.ranking.rules import word_set

if TYPE_CHECKING:
    import keras
    import tensorflow as tf

    from mtn_keras.base.config import DecodeConfig

PREFIX_CHARS = (2, 4, 6)
TYPED_EVERY = 3  # one pair in three is typed too: fitting costs a third more, not thrice
PLAIN_EVERY = 2  # one pair in two again without its history, for users without one
# The share of the validation SR@k each threshold keeps (ranker.choose_threshold), on
# out-of-fold probabilities. A list of the user's own earlier queries costs a searcher little
# when unsure, so it is cut less. (Chosen once by test-user figures, kept; see
# docs/ranking.md. The session's own candidates are held to the plain threshold, with a
# history too: HybridRanker.)
KEEP = {"plain": 0.95, "history": 0.99}
FOLDS = 3  # the thresholds are tuned on users the ranker that scores them was not fitted on
# A row the ranker is fitted on: (context, next query, typed prefix, history).
Row = tuple[list[str], str, str, list[str]]
# A tuned threshold: (threshold, SR@k % with all shown, its curve point).
Chosen = tuple[float, float, tuple[float, float, float]]


class FittedRows(TypedDict):  # what `fitting_rows` returns (see there)
    pairs: int
    plain: int
    rows: int
    lines: list[int]
    features: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    keys: list[str]


def pairs_as_met(
    sessions: list[list[str]],
    histories: PairHistories | None = None,
    chars: Sequence[int] = PREFIX_CHARS,
) -> tuple[list[Row], int, list[int]]:
    """The (context, next query, typed prefix, history) rows the ranker is fitted on: first
    every pair of `session_pairs` with nothing typed (as `suggest` meets it), with its
    user's earlier queries (`histories`, PairHistories, or None); with histories, then one
    pair in PLAIN_EVERY again without them (as a newcomer meets `suggest`); then one in
    TYPED_EVERY again with the first 2, 4 or 6 characters of its next query typed (the
    lengths in turn), and of the sessions' first queries so typed after an empty session
    (as `complete` meets them). Returns the rows, how many untyped rows have histories, and
    each row's line (its session's index)."""
    earlier = (lambda i: histories[i]) if histories is not None else (lambda i: [])
    pairs = [
        (session[: t + 1], session[t + 1], earlier(i), i)
        for i, session in enumerate(sessions)
        for t in range(len(session) - 1)
    ]
    firsts: list[tuple[list[str], str, list[str], int]]
    firsts = [([], session[0], earlier(i), i) for i, session in enumerate(sessions) if session]
    plain: list[tuple[list[str], str, str, list[str], int]] = []
    if histories is not None:
        plain = [(c, q, "", [], i) for n, (c, q, _, i) in enumerate(pairs) if n % PLAIN_EVERY == 0]
    typed = [
        (context, query, query[: chars[n // TYPED_EVERY % len(chars)]], history, i)
        for n, (context, query, history, i) in enumerate(pairs + firsts)
        if n % TYPED_EVERY == 0
    ]
    untyped = [(context, query, "", history, i) for context, query, history, i in pairs]
    rows = untyped + plain + typed
    return [row[:4] for row in rows], len(plain), [row[4] for row in rows]


def user_folds(units: Iterable[str | int], folds: int = FOLDS) -> np.ndarray:
    """The fold (0 .. folds-1) of each row's unit (user), by a stable hash of its name."""
    return np.array([zlib.crc32(str(unit).encode()) % folds for unit in units])


def ranker_probabilities(ranker: keras.Model, features: np.ndarray) -> np.ndarray:
    """The ranker's probabilities [N] of candidates' features [N, F]."""
    logits = ranker.predict(features, batch_size=4096, verbose=0)[:, 0]
    return 1.0 / (1.0 + np.exp(-logits))


class CandidateSteps(Protocol):
    """What the ranker's fitting reads of the serving graph's steps
    (serving.steps.SuggestionSteps with a ranking): every candidate of a batch as the graph
    ranks them, by the same route as its suggestions."""

    def candidate_table(
        self, session: tf.Tensor, prefix: tf.Tensor, history: tf.Tensor
    ) -> dict[str, tf.Tensor]: ...


def candidate_rows(
    steps: CandidateSteps, rows: Sequence[Row], batch_size: int = 64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The valid candidates of every (context, next query, prefix, history) row: features
    [N, F], labels [N] (the candidate is the next query), groups [N] (the row's number) and
    keys [N] (its word set), from the `candidate_table` of the serving graph's `steps`."""
    import tensorflow as tf

    table = tf.function(
        steps.candidate_table,
        autograph=False,
        input_signature=[
            tf.TensorSpec([None, None], tf.string),
            tf.TensorSpec([None], tf.string),
            tf.TensorSpec([None, HISTORY_SIZE], tf.string),
        ],
    )
    features, labels, groups, keys = [], [], [], []
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        # one batch shape, one compilation
        empty: list[list[str]] = [[]] * (batch_size - len(batch))
        sessions = front_padded([context for context, _, _, _ in batch] + empty)
        prefixes = [prefix for _, _, prefix, _ in batch] + [""] * len(empty)
        earlier = [list(latest(history)) for _, _, _, history in batch]
        history = front_padded(earlier + empty, HISTORY_SIZE)
        found = table(
            tf.constant(sessions, tf.string),
            tf.constant(prefixes),
            tf.constant(history, tf.string, [batch_size, HISTORY_SIZE]),
        )
        texts = [[t.decode() for t in row] for row in found["texts"].numpy()]
        valid = found["valid"].numpy()
        values = found["features"].numpy()
        for row, (_, reference, _, _) in enumerate(batch):
            for column in np.nonzero(valid[row])[0]:
                features.append(values[row, column])
                labels.append(texts[row][column] == reference)
                groups.append(start + row)
                keys.append(word_set(texts[row][column]))
    return np.array(features, np.float32), np.array(labels), np.array(groups), keys


def fit_ranking(
    steps_for: Callable[[QueryLogIndex], CandidateSteps],
    data: RankingData,
    decoding: DecodeConfig,
    hidden: int = 16,
    progress: Callable[[str], object] = print,
) -> Ranking:
    """A model's `Ranking`: the index of `data`'s training sessions, and the ranker fitted on
    the candidates of its validation sessions (with their users' earlier queries when the
    dataset has them), where the thresholds are tuned too (one for sessions without a
    history, one with), each on out-of-fold probabilities: rankers fitted on FOLDS - 1
    folds of the users score the held-out fold, so the thresholds and the figures in
    ranking.json are not in-sample. `steps_for(index)` gives the serving graph's steps of
    the model ranked with that index (decoded with `decoding`, threshold 0; see
    `candidate_table`). The validation users are users the model never saw, as the product
    meets them: held-out sessions of training users, added, made a worse ranker
    (docs/ranking.md): the model remembers them, and its scores of their next queries
    mislead."""
    index = QueryLogIndex.build(
        data.train_sessions, blocked_phrases(), users=data.train_users, evidence=data.evidence
    )
    progress(f"index: {index.sizes()}")
    fitted = fitting_rows(steps_for(index), data, progress)
    ranker = fit_ranker(fitted["features"], fitted["labels"], hidden)
    units: Sequence[str | int] | None = data.valid_users
    if units is None:
        units = range(len(data.valid_sessions))
    probabilities = out_of_fold(fitted, units, hidden)
    progress(f"thresholds: tuned on out-of-fold probabilities ({FOLDS} folds of the users)")
    chosen = tuned_thresholds(fitted, probabilities, decoding.k, progress)
    info = ranking_info(fitted, chosen, index, decoding, hidden, data.valid_histories)
    threshold = chosen["plain"][0]
    history_threshold = chosen["history"][0] if "history" in chosen else None
    return Ranking(index, ranker, threshold, info, history_threshold)


def fitting_rows(
    steps: CandidateSteps, data: RankingData, progress: Callable[[str], object] = print
) -> FittedRows:
    """The rows the ranker is fitted on (`pairs_as_met` of `data`'s validation sessions) and
    their candidates by the serving graph's `steps` (`candidate_rows`): a dict of the
    untyped `pairs` count, the `plain` count, each row's `lines`, and the candidates'
    `features`, `labels`, `groups` and `keys`."""
    pairs = len(session_pairs(data.valid_sessions))
    rows, plain, lines = pairs_as_met(data.valid_sessions, data.valid_histories)
    if data.valid_histories is not None:
        with_history = sum(bool(history) for _, _, _, history in rows[:pairs])
        progress(f"valid: {with_history:,} of {pairs:,} pairs have an earlier query")
    features, labels, groups, keys = candidate_rows(steps, rows)
    progress(
        f"valid: {len(labels)} candidates of {len(rows)} pairs (with and without histories) "
        f"and typed prefixes, {int(labels.sum())} the next query"
    )
    return {
        "pairs": pairs,
        "plain": plain,
        "rows": len(rows),
        "lines": lines,
        "features": features,
        "labels": labels,
        "groups": groups,
        "keys": keys,
    }


def out_of_fold(fitted: FittedRows, units: Sequence[str | int], hidden: int) -> np.ndarray:
    """Each candidate's probability by a ranker fitted on the other FOLDS - 1 folds of the
    users (`units`: each validation line's user) of the `fitted` rows (`fitting_rows`)."""
    features, labels = fitted["features"], fitted["labels"]
    folds = user_folds([units[fitted["lines"][group]] for group in fitted["groups"]])
    probabilities = np.zeros(len(labels))
    for fold in range(FOLDS):
        held = folds == fold
        ranker = fit_ranker(features[~held], labels[~held], hidden)
        probabilities[held] = ranker_probabilities(ranker, features[held])
    return probabilities


def tuned_thresholds(
    fitted: FittedRows, probabilities: np.ndarray, k: int, progress: Callable[[str], object] = print
) -> dict[str, Chosen]:
    """Name ("plain", and with histories "history") -> (threshold, SR@k % with all shown,
    its curve point (threshold, SR@k %, coverage %)). The thresholds hold `suggest` only
    (completions are not held to them): each is tuned on its own untyped rows of the
    `fitted` rows (`fitting_rows`), without histories and with them (as the model meets
    users)."""
    pairs, plain, groups = fitted["pairs"], fitted["plain"], fitted["groups"]
    spans = {"history": (0, pairs), "plain": (pairs, pairs + plain)}
    if not plain:  # no histories: the pairs are the users' without history
        spans = {"plain": (0, pairs)}
    chosen = {}
    for name, (low, high) in spans.items():
        rows_in = (groups >= low) & (groups < high)
        curve = threshold_curve(
            probabilities[rows_in],
            groups[rows_in],
            [key for key, keep in zip(fitted["keys"], rows_in) if keep],
            fitted["labels"][rows_in],
            high - low,
            k,
        )
        threshold = choose_threshold(curve, KEEP[name])
        at = next((point for point in curve if point[0] >= threshold), (threshold, 0.0, 0.0))
        chosen[name] = (threshold, curve[0][1] if curve else 0.0, at)
        progress(
            f"threshold {name} {threshold:.4f}: SR@{k} {at[1]:.2f}% (all shown "
            f"{chosen[name][1]:.2f}%), coverage {at[2]:.1f}% on {high - low:,} validation pairs"
        )
    return chosen


def ranking_info(
    fitted: FittedRows,
    chosen: dict[str, Chosen],
    index: QueryLogIndex,
    decoding: DecodeConfig,
    hidden: int,
    histories: PairHistories | None,
) -> dict[str, Any]:
    """ranking.json's figures: the features, the ranker's size, the index's sizes, what it
    was fitted on (`fitted`, `fitting_rows`), the validation SR@k and coverage at the
    `chosen` thresholds (`tuned_thresholds`) and the decoding it was fitted with."""
    k = decoding.k
    _, all_shown, at = chosen["plain"]
    labels = fitted["labels"]
    info = {
        "features": list(FEATURES),
        "hidden": hidden,
        "index": index.sizes(),
        "fitted_on": {
            "pairs": fitted["pairs"],
            "histories": histories is not None,
            "pairs_without_history": fitted["plain"],
            "typed_pairs": fitted["rows"] - fitted["pairs"] - fitted["plain"],
            "candidates": len(labels),
            "positives": int(labels.sum()),
        },
        f"sr@{k}_all_shown": all_shown,
        f"sr@{k}": at[1],
        "coverage": at[2],
        "decoding": {
            "beam": decoding.beam,
            "alpha": decoding.length_alpha(ranked=True),
            "filters": list(decoding.filters),
        },
    }
    if "history" in chosen:
        _, shown, point = chosen["history"]
        info["with_history"] = {
            f"sr@{k}_all_shown": shown,
            f"sr@{k}": point[1],
            "coverage": point[2],
        }
    return info
