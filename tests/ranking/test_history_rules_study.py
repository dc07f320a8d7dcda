"""studies/history_rules.py measures placement rules in numpy; its rule for the shipped
placement must give the lists of the serving graph's `hybrid.placed`."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mtn_keras.ranking.hybrid import capped, placed  # noqa: E402
from studies.history_rules import LAST, RULES, SHIPPED, history_order, shown  # noqa: E402

THRESHOLDS = (0.001, 0.01)


def graph_list(cands, unrelated, last):
    """hybrid.placed's list for the same candidates, scored and held as HybridRanker does,
    `unrelated` earlier queries at most, placed `last` or where the ranker puts them."""
    mine = cands["mine"]
    scores = np.where(mine, cands["p"], cands["p0"])
    floor = np.where(mine, THRESHOLDS[1], THRESHOLDS[0])
    scores = np.where(scores >= floor, scores, -np.inf).astype(np.float32)
    loose = tf.constant([cands["loose"]])
    scores = capped(tf.constant([scores]), loose, unrelated)
    chosen = placed(scores, tf.constant([mine]), loose, tf.constant([False]), 5, last)
    shown = tf.gather(scores, chosen, batch_dims=1).numpy()[0]
    return [int(c) for c, s in zip(chosen.numpy()[0], shown) if np.isfinite(s)]


@pytest.mark.parametrize("seed", range(40))
def test_the_studys_rules_are_the_graphs(seed):
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
    assert shown(cands, RULES[SHIPPED], THRESHOLDS) == graph_list(cands, 1, last=False)
    assert shown(cands, RULES[LAST], THRESHOLDS) == graph_list(cands, 2, last=True)


def test_history_order_bounds_what_any_placement_could_reach(capsys):
    """Repeat row 0: the next query is the history's 6th best candidate, so the ranker's
    five miss it and the ceiling holds it; new row 1 kept its hit without history."""
    p = np.linspace(0.9, 0.1, 7)
    cands = [
        {
            "p": p,
            "mine": np.array([True] * 7),
            "labels": np.arange(7) == 5,
            "keys": [f"query {i}" for i in range(7)],
        },
        {"p": p[:1], "mine": np.array([False]), "labels": np.array([True]), "keys": ["x"]},
    ]
    history_order(cands, np.array([True, False]), np.array([False, True]), anchor=0.25)
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("repeat 0.00; all pairs at most 50.00 = 2.00 x the anchor")
    assert out[1].endswith("repeat 100.00; all pairs at most 100.00 = 4.00 x the anchor")
