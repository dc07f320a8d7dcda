"""The ranker: a small Keras model from a candidate's features to the logit of its being the
next query, fitted with `model.fit` on the validation split's candidates (`build.py`); and
the choice of the confidence threshold below which a suggestion is not shown."""

from collections.abc import Sequence

import keras
import numpy as np


def build_ranker(num_features: int, hidden: int = 16, l2: float = 1e-3) -> keras.Model:
    """Standardised features -> one hidden ReLU layer (none if hidden is 0) -> a logit."""
    inputs = keras.Input((num_features,), name="features")
    x = keras.layers.Normalization(name="standardise")(inputs)
    if hidden:
        x = keras.layers.Dense(
            hidden, "relu", kernel_regularizer=keras.regularizers.L2(l2), name="hidden"
        )(x)
    logit = keras.layers.Dense(1, kernel_regularizer=keras.regularizers.L2(l2), name="logit")(x)
    return keras.Model(inputs, logit, name="ranker")


def fit_ranker(
    features: np.ndarray, labels: np.ndarray, hidden: int = 16, epochs: int = 40, seed: int = 0
) -> keras.Model:
    """A ranker fitted to candidates' features [N, F] and labels [N] (1: the next query),
    by binary cross-entropy, so that its sigmoid reads as a probability. Seeded by `seed`;
    the process's global seeds are as they were afterwards."""
    from mtn_keras.base.scoped import seeded

    with seeded(seed):
        ranker = build_ranker(features.shape[1], hidden)
        ranker.get_layer("standardise").adapt(features)
        loss = keras.losses.BinaryCrossentropy(from_logits=True)
        ranker.compile(keras.optimizers.Adam(3e-3), loss)
        ranker.fit(features, labels.astype("float32"), batch_size=256, epochs=epochs, verbose=0)
    return ranker


def ranked_lists(
    probabilities: np.ndarray, groups: np.ndarray, keys: Sequence[str], k: int = 5
) -> dict[int, list[int]]:
    """Per group (one pair), the rows of its k most probable candidates, best first, of
    distinct `keys` (the word sets: the first of a key stays, as in the serving graph)."""
    lists: dict[int, list[int]] = {}
    for row in np.lexsort((-probabilities, groups)):
        shown = lists.setdefault(groups[row], [])
        if len(shown) < k and all(keys[other] != keys[row] for other in shown):
            shown.append(row)
    return lists


def threshold_curve(
    probabilities: np.ndarray,
    groups: np.ndarray,
    keys: Sequence[str],
    labels: np.ndarray,
    num_pairs: int,
    k: int = 5,
) -> list[tuple[float, float, float]]:
    """(threshold, SR@k %, coverage %) for every distinct probability of a listed candidate:
    what the validation pairs would get if only candidates at or above it were shown."""
    lists = ranked_lists(probabilities, groups, keys, k)
    best = np.array([probabilities[rows[0]] for rows in lists.values()])
    hit = np.array(
        [
            max((probabilities[r] for r in rows if labels[r]), default=-1.0)
            for rows in lists.values()
        ]
    )
    listed = np.concatenate([probabilities[rows] for rows in lists.values()])
    curve = []
    for threshold in np.unique(listed):
        curve.append(
            (
                float(threshold),
                100.0 * np.sum(hit >= threshold) / num_pairs,
                100.0 * np.sum(best >= threshold) / num_pairs,
            )
        )
    return curve


def choose_threshold(curve: Sequence[tuple[float, float, float]], keep: float = 0.95) -> float:
    """The highest threshold whose SR@k keeps `keep` of the SR@k of showing everything:
    lists get shorter (or empty) where the ranker is unsure, at little cost in hits. With no
    hit at all to keep, nothing justifies a threshold: 0."""
    full = curve[0][1] if curve else 0.0
    if full == 0:
        return 0.0
    return max(t for t, success, _ in curve if success >= keep * full)
