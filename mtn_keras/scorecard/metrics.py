"""Corpus BLEU and modified n-gram precision (sacrebleu), success rate at k, perplexity.

BLEU is standard corpus BLEU (Papineni et al. 2002) as in the paper's Table 2 and Figure 2:
sacrebleu with `tokenize="none"` (the text is already normalised), case kept, 4-gram maximum
and no smoothing, so that p1..p4 are exactly the clipped-count precisions (in percent) and an
order with no match at all gives BLEU 0, as the original definition does.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, TypedDict

from sacrebleu.metrics import BLEU

from mtn_keras.data.safety import child_unsafe, explicit
from mtn_keras.ranking.rules import blocks, repeats_a_word, repeats_session
from mtn_keras.scorecard.anchors import Pair
from mtn_keras.scorecard.quality import is_new


class BleuSettings(TypedDict):
    """The keyword arguments of sacrebleu's BLEU that the scorecard fixes."""

    tokenize: str
    smooth_method: str
    force: bool


BLEU_SETTINGS: BleuSettings = {"tokenize": "none", "smooth_method": "none", "force": True}
_BLEU = BLEU(**BLEU_SETTINGS)


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, Any]:
    """Corpus BLEU, p1..p4 and brevity penalty of one hypothesis per reference, in percent."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    score = _BLEU.corpus_score(hypotheses, [references])
    return {
        "bleu": score.score,
        "precisions": list(score.precisions),
        "bp": score.bp,
        "sys_len": score.sys_len,
        "ref_len": score.ref_len,
    }


def success_rate(suggestion_lists: list[list[str]], references: list[str], k: int) -> float:
    """Percentage of pairs whose reference is exactly one of the first k suggestions."""
    if len(suggestion_lists) != len(references):
        raise ValueError(
            f"{len(suggestion_lists)} suggestion lists for {len(references)} references"
        )
    if not references:
        return 0.0
    hits = sum(ref in suggestions[:k] for suggestions, ref in zip(suggestion_lists, references))
    return 100.0 * hits / len(references)


def mean_reciprocal_rank(suggestion_lists: list[list[str]], references: list[str], k: int) -> float:
    """Mean of 1 / (rank of the reference among the first k suggestions; 0 if absent), in
    percent."""
    if not references:
        return 0.0
    total = sum(
        1.0 / (suggestions[:k].index(ref) + 1)
        for suggestions, ref in zip(suggestion_lists, references)
        if ref in suggestions[:k]
    )
    return 100.0 * total / len(references)


def list_quality(
    suggestion_lists: list[list[str]], pairs: list[Pair], phrases: Collection[str], k: int
) -> dict[str, float]:
    """What the shown lists (the first k) hold, in percent: `coverage` (pairs shown at least
    one suggestion), `precision` (SR@k among those pairs), `sr@k_new` (SR@k on the pairs
    whose next query is new: not a session query nor inside one; `new_pairs` of them),
    and the shares of shown suggestions that repeat a session query or lie inside one,
    repeat a word, hold a blocked word, are sexually explicit or seek sexual content involving
    minors (data/safety.py)."""
    shown = [suggestions[:k] for suggestions in suggestion_lists]
    covered = [(s, ref) for s, (_, ref) in zip(shown, pairs) if s]
    new = [(s, ref) for s, (context, ref) in zip(shown, pairs) if is_new(ref, context)]
    items = [(text, context) for s, (context, _) in zip(shown, pairs) for text in s]
    share = lambda hits, total: 100.0 * hits / total if total else 0.0  # noqa: E731
    return {
        "coverage": share(len(covered), len(pairs)),
        "precision": share(sum(ref in s for s, ref in covered), len(covered)),
        f"sr@{k}_new": share(sum(ref in s for s, ref in new), len(new)),
        "new_pairs": share(len(new), len(pairs)),
        "shown": len(items),
        "repeats_session": share(sum(repeats_session(t, c) for t, c in items), len(items)),
        "repeats_word": share(sum(repeats_a_word(t) for t, _ in items), len(items)),
        "blocked": share(sum(blocks(t, phrases) for t, _ in items), len(items)),
        "explicit": share(sum(explicit(t) for t, _ in items), len(items)),
        "child_unsafe": share(sum(child_unsafe(t) for t, _ in items), len(items)),
    }


def perplexity(total_nll: float, total_tokens: float) -> float:
    """exp of the mean negative log-likelihood (natural log) per target token."""
    if total_tokens <= 0:
        raise ValueError("perplexity needs at least one target token")
    return math.exp(total_nll / total_tokens)
