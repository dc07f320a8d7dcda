"""95% intervals of the suggestion figures from a bootstrap over users.

Pairs of one user are not independent (the same habits, often the same topic), so a
resample draws users, not pairs: the evaluated users are drawn with replacement, each drawn
user brings all of its pairs, the corpus figure is computed again on them, and the interval
is the 2.5th to 97.5th percentile of the resampled figures (the percentile bootstrap). When
the pairs' users are unknown the same is done over sessions.

Every figure is a ratio of sums over pairs (BLEU of its n-gram counts and lengths, SR@k of
hits over pairs), so each unit's sums are taken once and a resample is the unit sums
weighted by how often each unit was drawn. BLEU is sacrebleu's own corpus BLEU
(`BLEU.compute_bleu`, the step `corpus_score` ends in) on those summed statistics: the same
number as calling `corpus_score` on the resample's pairs, without 1000 passes over the text.
sacrebleu's paired bootstrap is not used: it resamples sentences (pairs), not users.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU

from mtn_keras.scorecard.anchors import Pair
from mtn_keras.scorecard.metrics import BLEU_SETTINGS
from mtn_keras.scorecard.quality import is_new

RATIOS = ("sr@1", "sr@5", "mrr@5", "sr@5_new", "coverage")


def bleu_statistics(hypotheses: list[str], references: list[str]) -> np.ndarray:
    """Each pair's BLEU statistics, int64 (pairs, 10): hypothesis and reference length, the
    matched n-grams (n = 1..4), the hypothesis n-grams (n = 1..4)."""
    bleu = BLEU(**BLEU_SETTINGS)
    rows = []
    for hypothesis, reference in zip(hypotheses, references):
        score = bleu.corpus_score([hypothesis], [[reference]])
        rows.append([score.sys_len, score.ref_len, *score.counts, *score.totals])
    return np.asarray(rows, dtype=np.int64).reshape(-1, 10)


def bleu_of(statistics: Sequence[int] | np.ndarray) -> tuple[float, list[float]]:
    """Corpus BLEU and p1..p4 (percent) of summed `bleu_statistics`, by sacrebleu."""
    stats = [int(x) for x in statistics]
    score = BLEU.compute_bleu(
        correct=stats[2:6],
        total=stats[6:10],
        sys_len=stats[0],
        ref_len=stats[1],
        smooth_method=BLEU_SETTINGS["smooth_method"],
    )
    return score.score, list(score.precisions)


def ratio_parts(lists: list[list[str]], pairs: list[Pair], k: int = 5) -> dict[str, np.ndarray]:
    """Per pair, the numerator and denominator (pairs, 2) of each figure of `RATIOS`: a
    figure is 100 * sum(numerators) / sum(denominators), as `evaluate_suggesters` has it."""
    parts: dict[str, list[tuple[float, float]]] = {name: [] for name in RATIOS}
    for texts, (context, reference) in zip(lists, pairs):
        shown = texts[:k]
        hit = reference in shown
        new = is_new(reference, context)
        parts["sr@1"].append((reference in texts[:1], 1))
        parts["sr@5"].append((hit, 1))
        parts["mrr@5"].append((1.0 / (shown.index(reference) + 1) if hit else 0.0, 1))
        parts["sr@5_new"].append((hit and new, new))
        parts["coverage"].append((bool(shown), 1))
    return {name: np.asarray(rows, dtype=np.float64).reshape(-1, 2) for name, rows in parts.items()}


def resample_counts(units: int, resamples: int, seed: int = 0) -> np.ndarray:
    """How often each unit is drawn, (resamples, units): each row draws `units` units with
    replacement, seeded."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(units, np.full(units, 1.0 / units), size=resamples)


def intervals(
    hypotheses: list[str],
    lists: list[list[str]],
    pairs: list[Pair],
    groups: Sequence[str] | None,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """The 95% interval of each suggestion figure, resampling the units of `groups` (the
    user, or session, of each pair): `bleu_ci`, `precisions_ci` (one per n), and `NAME_ci`
    for each of `RATIOS`, each [low, high]."""
    if not pairs or resamples < 1:
        return {}
    if groups is None or len(groups) != len(pairs):
        raise ValueError("a bootstrap needs the unit (user or session) of every pair")
    references = [reference for _, reference in pairs]
    resampled = UserResamples(groups, resamples, seed)
    bleu_stats = resampled.counts @ resampled.sums(bleu_statistics(hypotheses, references))
    scores = [bleu_of(row) for row in bleu_stats]
    return {
        "bleu_ci": _percentiles([bleu for bleu, _ in scores]),
        "precisions_ci": [_percentiles([p[n] for _, p in scores]) for n in range(4)],
        **ratio_intervals(lists, pairs, groups, resamples, seed),
    }


def ratio_intervals(
    lists: list[list[str]],
    pairs: list[Pair],
    groups: Sequence[str | int],
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, list[float] | None]:
    """The 95% interval `NAME_ci` of each figure of `RATIOS` (no BLEU), resampling the units
    of `groups` as `intervals` does (the same draws for the same units and seed)."""
    resampled = UserResamples(groups, resamples, seed)
    return {
        f"{name}_ci": resampled.interval(parts[:, 0], parts[:, 1])
        for name, parts in ratio_parts(lists, pairs).items()
    }


class UserResamples:
    """The bootstrap draws of the units of `groups` (each pair's user, or session), the same
    for every figure resampled with the same units, `resamples` and `seed`."""

    def __init__(self, groups: Sequence[str | int], resamples: int, seed: int = 0) -> None:
        _, self.unit_of = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
        self.units = int(self.unit_of.max()) + 1 if len(self.unit_of) else 0
        self.counts = (
            resample_counts(self.units, resamples, seed) if resamples and self.units else None
        )

    def sums(self, per_pair: np.ndarray) -> np.ndarray:
        """Per-pair rows (pairs, C) summed per unit (units, C)."""
        sums = np.zeros((self.units, per_pair.shape[1]), dtype=per_pair.dtype)
        np.add.at(sums, self.unit_of, per_pair)
        return sums

    def interval(self, numerators: np.ndarray, denominators: np.ndarray) -> list[float] | None:
        """The 95% interval of 100 * sum(numerators) / sum(denominators) over the resamples
        (None without resamples)."""
        if self.counts is None:
            return None
        per_pair = np.stack([numerators, denominators], axis=1).astype(np.float64)
        num, den = (self.counts @ self.sums(per_pair)).T
        return _percentiles(np.divide(100.0 * num, den, out=np.zeros_like(num), where=den > 0))


def _percentiles(values: Sequence[float] | np.ndarray) -> list[float]:
    """The 2.5th and 97.5th percentiles."""
    low, high = np.percentile(np.asarray(values, dtype=np.float64), [2.5, 97.5])
    return [float(low), float(high)]
