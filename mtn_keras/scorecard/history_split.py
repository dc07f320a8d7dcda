"""Every history figure in two: a list has two jobs, to bring back what the user searched
before ("repeat" pairs: the next query is among their earlier queries) and to suggest what
is new for them ("new" pairs, three in four on AOL). A history that wins the first by losing
the second drowns the session, so each is reported apart, with the paired difference on new
pairs (with history minus without, resampling users) and the share of shown items that came
from the history yet relate to nothing in the session (`rules.relates`)."""

import numpy as np

from mtn_keras.ranking.rules import relates
from mtn_keras.scorecard.bootstrap import resample_counts

K = 5


def repeat_mask(pairs, histories):
    """[pairs] bool: the pair's next query is among its user's earlier queries."""
    return np.array(
        [reference in set(history) for (_, reference), history in zip(pairs, histories)], bool
    )


def hit_parts(lists, pairs, k=K):
    """Per pair: SR@1, SR@k and reciprocal rank (k) of its list, float (pairs, 3)."""
    rows = []
    for texts, (_, reference) in zip(lists, pairs):
        shown = texts[:k]
        rank = shown.index(reference) + 1 if reference in shown else 0
        rows.append((rank == 1, rank > 0, 1.0 / rank if rank else 0.0))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 3)


def unrelated_items(lists, pairs, histories, follows, prefixes=None, k=K):
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


class UserResamples:
    """The same bootstrap draws of users for every figure: sums per user, resampled."""

    def __init__(self, groups, resamples, seed):
        _, self.unit_of = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
        units = int(self.unit_of.max()) + 1 if len(self.unit_of) else 0
        self.units = units
        self.counts = resample_counts(units, resamples, seed) if resamples and units else None

    def interval(self, numerators, denominators):
        """The 95% interval of 100 * sum(num) / sum(den) over resampled users (None
        without resamples)."""
        if self.counts is None:
            return None
        sums = np.zeros((self.units, 2))
        np.add.at(sums, self.unit_of, np.stack([numerators, denominators], axis=1))
        num, den = (self.counts @ sums).T
        values = np.divide(100.0 * num, den, out=np.zeros_like(num), where=den > 0)
        return [float(v) for v in np.percentile(values, [2.5, 97.5])]


def split_figures(lists, pairs, repeat, resampled, histories, follows, prefixes=None):
    """SR@1, SR@5 and MRR@5 (percent) on repeat and on new pairs, SR@5 with its interval,
    and the share of shown items from the history that relate to nothing (percent)."""
    parts = hit_parts(lists, pairs)
    out = {}
    for name, mask in (("repeat", repeat), ("new", ~repeat)):
        taken = parts[mask]
        count = max(len(taken), 1)
        out[name] = {
            "pairs": int(mask.sum()),
            "sr@1": 100.0 * taken[:, 0].sum() / count,
            "sr@5": 100.0 * taken[:, 1].sum() / count,
            "mrr@5": 100.0 * taken[:, 2].sum() / count,
            "sr@5_ci": resampled.interval(parts[:, 1] * mask, mask.astype(np.float64)),
        }
    items = unrelated_items(lists, pairs, histories, follows, prefixes)
    shown = max(int(items[:, 0].sum()), 1)
    out["unrelated_history"] = 100.0 * items[:, 1].sum() / shown
    out["unrelated_history_ci"] = resampled.interval(items[:, 1], items[:, 0])
    return out


def paired_difference(with_history, without, pairs, mask, resampled):
    """SR@5 with history minus without on the pairs of `mask` (percentage points), and its
    95% interval over the same resampled users."""
    delta = hit_parts(with_history, pairs)[:, 1] - hit_parts(without, pairs)[:, 1]
    mask = mask.astype(np.float64)
    return {
        "difference": 100.0 * (delta * mask).sum() / max(mask.sum(), 1.0),
        "ci": resampled.interval(delta * mask, mask),
    }
