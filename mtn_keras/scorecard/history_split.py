"""Every history figure in two: a list has two jobs, to bring back what the user searched
before ("repeat" pairs: the next query is among their earlier queries) and to suggest what
is new for them ("new" pairs, three in four on AOL). A history that wins the first by losing
the second drowns the session, so each is reported apart, with the paired difference on new
pairs (with history minus without, resampling users) and the share of shown items that came
from the history yet relate to nothing in the session (`rules.relates`)."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from mtn_keras.ranking.rules import relates
from mtn_keras.scorecard.anchors import Pair
from mtn_keras.scorecard.bootstrap import UserResamples, ratio_parts

K = 5


def repeat_mask(pairs: list[Pair], histories: Sequence[Sequence[str]]) -> np.ndarray:
    """[pairs] bool: the pair's next query is among its user's earlier queries."""
    return np.array(
        [reference in set(history) for (_, reference), history in zip(pairs, histories)], bool
    )


def hits(lists: list[list[str]], pairs: list[Pair]) -> np.ndarray:
    """Per pair: 1.0 if its list's first K hold the next query (bootstrap.ratio_parts)."""
    return ratio_parts(lists, pairs, K)["sr@5"][:, 0]


def unrelated_items(
    lists: list[list[str]],
    pairs: list[Pair],
    histories: Sequence[Sequence[str]],
    follows: AbstractSet[tuple[str, str]],
    prefixes: list[str] | None = None,
    k: int = K,
) -> np.ndarray:
    """Per pair: (shown items, shown items from the history that relate to nothing in the
    session), int (pairs, 2)."""
    prefixes = prefixes or [""] * len(pairs)
    rows = []
    for texts, (context, _), history, prefix in zip(lists, pairs, histories, prefixes):
        earlier = set(history)
        loose = sum(
            text in earlier and not relates(text, context, history, follows, prefix)
            for text in texts[:k]
        )
        rows.append((len(texts[:k]), loose))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def split_figures(
    lists: list[list[str]],
    pairs: list[Pair],
    repeat: np.ndarray,
    resampled: UserResamples,
    histories: Sequence[Sequence[str]],
    follows: AbstractSet[tuple[str, str]],
    prefixes: list[str] | None = None,
) -> dict[str, Any]:
    """SR@1, SR@5 and MRR@5 (percent) on repeat and on new pairs, SR@5 with its interval,
    and the share of shown items from the history that relate to nothing (percent)."""
    parts = ratio_parts(lists, pairs, K)
    out: dict[str, Any] = {}
    for name, mask in (("repeat", repeat), ("new", ~repeat)):
        count = max(int(mask.sum()), 1)
        out[name] = {"pairs": int(mask.sum())} | {
            key: 100.0 * parts[key][mask, 0].sum() / count for key in ("sr@1", "sr@5", "mrr@5")
        }
        out[name]["sr@5_ci"] = resampled.interval(parts["sr@5"][:, 0] * mask, mask)
    items = unrelated_items(lists, pairs, histories, follows, prefixes)
    shown = max(int(items[:, 0].sum()), 1)
    out["unrelated_history"] = 100.0 * items[:, 1].sum() / shown
    out["unrelated_history_ci"] = resampled.interval(items[:, 1], items[:, 0])
    return out


def paired_difference(
    with_history: list[list[str]],
    without: list[list[str]],
    pairs: list[Pair],
    mask: np.ndarray,
    resampled: UserResamples,
) -> dict[str, Any]:
    """SR@5 with history minus without on the pairs of `mask` (percentage points), and its
    95% interval over the same resampled users."""
    delta = hits(with_history, pairs) - hits(without, pairs)
    mask = mask.astype(np.float64)
    return {
        "difference": 100.0 * (delta * mask).sum() / max(mask.sum(), 1.0),
        "ci": resampled.interval(delta * mask, mask),
    }
