"""The ranker's order on a hand-built case, the threshold curve and its choice."""

import numpy as np
import pytest

from mtn_keras.ranking.ranker import choose_threshold, fit_ranker, ranked_lists, threshold_curve


@pytest.mark.slow
def test_the_ranker_learns_which_feature_marks_the_next_query():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(600, 3)).astype("float32")
    labels = features[:, 1] > 1.0  # only the second feature matters
    ranker = fit_ranker(features, labels, hidden=0, epochs=60)
    probe = np.array([[0, -2, 0], [0, 0, 0], [0, 2, 0], [3, 0.5, -3]], "float32")
    logits = ranker.predict(probe, verbose=0)[:, 0]
    assert logits[0] < logits[1] < logits[2]
    assert logits[3] < logits[2]


def test_lists_thresholds_and_the_chosen_one():
    probabilities = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.1])
    groups = np.array([0, 0, 0, 1, 1, 2])
    keys = ["a", "a b", "a b", "c", "d", "e"]  # sorted words: the third repeats the second
    labels = np.array([False, True, False, False, True, False])
    lists = ranked_lists(probabilities, groups, keys, k=5)
    assert lists[0] == [0, 1] and lists[1] == [3, 4]  # the third has the words of a better one
    curve = threshold_curve(probabilities, groups, keys, labels, num_pairs=4)
    # thresholds: the listed probabilities; SR@5 counts hits at or above, coverage lists
    assert curve == [
        (0.1, 50.0, 75.0),
        (0.2, 50.0, 50.0),
        (0.6, 25.0, 50.0),
        (0.8, 25.0, 25.0),
        (0.9, 0.0, 25.0),
    ]
    assert choose_threshold(curve, keep=0.95) == 0.2
    assert choose_threshold(curve, keep=0.5) == 0.8
    assert choose_threshold([(0.1, 0.0, 75.0), (0.9, 0.0, 25.0)]) == 0.0  # no hit to keep


def test_the_folds_keep_a_users_rows_together_and_use_every_fold():
    from mtn_keras.ranking.build import FOLDS, user_folds

    users = [f"user{i}" for i in range(60)]
    folds = user_folds(users + users[::-1])
    assert (folds[:60] == folds[60:][::-1]).all()  # a user's rows share a fold
    assert set(folds.tolist()) == set(range(FOLDS))


def test_every_fitting_row_knows_its_line():
    from mtn_keras.ranking.build import pairs_as_met

    sessions = [["a b", "c d", "e f"], ["g h", "i j"]]
    rows, plain, lines = pairs_as_met(sessions, [["x y"], []])
    assert len(rows) == len(lines) and plain == 2
    for (context, query, _, _), line in zip(rows, lines):
        assert query in sessions[line] and all(q in sessions[line] for q in context)
