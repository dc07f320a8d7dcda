"""tools/history_rules.py measures placement rules in numpy; its rule for the shipped
placement must give the lists of the serving graph's `hybrid.placed`."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.ranking.hybrid import placed  # noqa: E402
from tools.history_rules import RULES, SHIPPED, shown  # noqa: E402

THRESHOLDS = (0.001, 0.01)


def graph_list(cands):
    """hybrid.placed's list for the same candidates, scored and held as HybridRanker does."""
    mine = cands["mine"]
    scores = np.where(mine, cands["p"], cands["p0"])
    floor = np.where(mine, THRESHOLDS[1], THRESHOLDS[0])
    scores = np.where(scores >= floor, scores, -np.inf).astype(np.float32)
    chosen = placed(
        tf.constant([scores]),
        tf.constant([mine]),
        tf.constant([cands["loose"]]),
        tf.constant([False]),
        5,
    ).numpy()[0]
    return [int(c) for c in chosen if np.isfinite(scores[c])]


@pytest.mark.parametrize("seed", range(40))
def test_the_tools_shipped_rule_is_the_graphs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 12))  # the graph has at least k columns
    mine = rng.random(n) < 0.6
    cands = {
        "p": rng.random(n) ** 3 / 10,
        "p0": rng.random(n) ** 3 / 50,
        "mine": mine,
        "loose": mine & (rng.random(n) < 0.5),
        "keys": [f"query {i}" for i in range(n)],
    }
    assert shown(cands, RULES[SHIPPED], THRESHOLDS) == graph_list(cands)
