"""The 95% intervals of `evaluate`: a bootstrap over users, on made-up users and suggesters."""

import random

import numpy as np
import pytest

from mtn_keras.data.pairs import pair_groups, session_pairs
from mtn_keras.scorecard import (
    Adj,
    batched,
    evaluate_suggesters,
    markdown_table,
    model_report,
    quality_table,
    table_rows,
)
from mtn_keras.scorecard.anchors import reading_history
from mtn_keras.scorecard.bootstrap import bleu_of, bleu_statistics, resample_counts
from mtn_keras.scorecard.metrics import corpus_scores

TOPICS = ["cheap flights", "rome hotels", "used cars", "garden tools", "cat food"]
FIGURES = ("bleu", "sr@1", "sr@5", "mrr@5", "sr@5_new", "coverage")


def made_up_users(users, seed=0):
    """Sessions and their users: each user refines topics, some edits the suggester knows."""
    rng = random.Random(seed)
    sessions, owners = [], []
    for user in range(users):
        for _ in range(rng.randint(1, 4)):
            topic = rng.choice(TOPICS)
            sessions.append([topic, f"{topic} {rng.choice(['online', 'near me', 'prices'])}"])
            owners.append(f"u{user}")
    return sessions, owners


def online(contexts):
    """A made-up suggester: the last query plus "near me", then plus "online"; nothing for
    "cat food"."""
    return [
        []
        if c[-1] == "cat food"
        else [(f"{c[-1]} near me", -1.0), (f"{c[-1]} online", -2.0), (c[-1], -3.0)]
        for c in contexts
    ]


def scores(sessions, users, resamples=200, seed=0):
    return evaluate_suggesters(
        session_pairs(sessions),
        {"online": online},
        progress=False,
        groups=pair_groups(sessions, users),
        resamples=resamples,
        seed=seed,
    )["online"]


def width(interval):
    return interval[1] - interval[0]


def test_each_interval_holds_its_figure():
    row = scores(*made_up_users(60))
    for name in FIGURES:
        low, high = row[f"{name}_ci"]
        assert low <= row[name] <= high and low < high, name
    for p, (low, high) in zip(row["precisions"], row["precisions_ci"]):
        assert low <= p <= high


def test_intervals_narrow_with_more_users():
    few, many = scores(*made_up_users(20)), scores(*made_up_users(500))
    for name in ("bleu", "sr@5", "mrr@5", "coverage"):
        assert width(many[f"{name}_ci"]) < width(few[f"{name}_ci"]) / 2, name


def test_intervals_are_reproducible_with_the_seed():
    """The seed alone fixes the draws: seed 3 gives the same intervals after Python's and
    NumPy's global random states were set apart (so no draw comes from them), and seed 4
    moves every interval, BLEU's and each n-gram precision's as well as the ratios' (so no
    figure's draws ignore the seed), while the figures themselves stay."""
    sessions, users = made_up_users(40)
    rows, saved = {}, (random.getstate(), np.random.get_state())
    for seed, state in ((3, 1), (3, 2), (4, 1)):
        random.seed(state)
        np.random.seed(state)
        rows[seed, state] = scores(sessions, users, seed=seed)
    random.setstate(saved[0])  # the tests after this one find the states as they were
    np.random.set_state(saved[1])
    assert rows[3, 1] == rows[3, 2]
    names = [key for key in rows[3, 1] if key.endswith("_ci")]
    assert {"bleu_ci", "precisions_ci", "sr@5_ci", "coverage_ci"} <= set(names)
    for name in names:
        one, other = rows[3, 1][name], rows[4, 1][name]
        for a, b in zip(one, other) if name == "precisions_ci" else [(one, other)]:
            assert a != b, name
    figures = {key: value for key, value in rows[3, 1].items() if key not in names}
    assert {key: rows[4, 1][key] for key in figures} == figures


def test_users_are_resampled_not_pairs():
    """One user with 200 pairs, all hits, among 19 users with 5 misses each: a resample
    without that user scores 0 and one with it twice about 80, so the interval over users
    spans most of the range; over pairs it would be a few points wide."""
    sessions = [["cheap flights", "cheap flights online"]] * 200 + [["cat food", "cat toys"]] * 95
    users = ["heavy"] * 200 + [f"u{i // 5}" for i in range(95)]
    by_user = scores(sessions, users, resamples=1000)
    by_pair = scores(sessions, [str(i) for i in range(295)], resamples=1000)
    assert by_user["sr@5"] == pytest.approx(100 * 200 / 295)
    assert by_user["sr@5_ci"][0] == 0.0 and by_user["sr@5_ci"][1] > 80
    assert width(by_pair["sr@5_ci"]) < 15


def test_a_resample_s_bleu_is_sacrebleu_s_corpus_bleu_of_its_pairs():
    sessions, users = made_up_users(30)
    pairs = session_pairs(sessions)
    hypotheses = [texts[0][0] if texts else "" for texts in online([c for c, _ in pairs])]
    references = [reference for _, reference in pairs]
    units = sorted(set(users))
    unit_of = [units.index(u) for u in pair_groups(sessions, users)]
    counts = resample_counts(len(units), 3, seed=1)[2]
    drawn = [i for i, unit in enumerate(unit_of) for _ in range(counts[unit])]
    expected = corpus_scores([hypotheses[i] for i in drawn], [references[i] for i in drawn])
    summed = (counts[unit_of][:, None] * bleu_statistics(hypotheses, references)).sum(axis=0)
    bleu, precisions = bleu_of(summed)
    assert bleu == pytest.approx(expected["bleu"]) and expected["bleu"] > 0
    assert precisions == pytest.approx(expected["precisions"])


def test_no_resamples_no_intervals():
    row = scores(*made_up_users(20), resamples=0)
    assert not [key for key in row if key.endswith("_ci")]


def test_without_users_the_sessions_are_resampled():
    sessions, _ = made_up_users(20)
    assert pair_groups(sessions) == [str(i) for i in range(len(sessions))]
    assert pair_groups([["a", "b", "c"], ["d", "e"]], ["x", "y"]) == ["x", "x", "y"]
    assert "sr@5_ci" in scores(sessions, None)


def test_the_tables_show_each_interval_beside_its_figure():
    sessions, users = made_up_users(30)
    pairs = session_pairs(sessions)
    suggesters = {"online": online, "adj": batched(Adj().fit(sessions))}
    results = evaluate_suggesters(
        pairs, suggesters, progress=False, groups=pair_groups(sessions, users), resamples=50
    )
    report = model_report(results.pop("online"), results, None, None)
    rows = table_rows({"online": report})
    row = rows["online"]
    line = markdown_table(rows).splitlines()[2]
    low, high = row["sr@5_ci"]
    assert f"| {row['sr@5']:.2f} [{low:.2f}, {high:.2f}] |" in line
    p1, (p1_low, p1_high) = row["precisions"][0], row["precisions_ci"][0]
    assert f"| {p1:.1f} [{p1_low:.1f}, {p1_high:.1f}]/" in line
    quality = quality_table(rows).splitlines()[2]
    low, high = row["coverage_ci"]
    assert f"| {row['coverage']:.2f} [{low:.2f}, {high:.2f}] |" in quality
    assert np.isfinite(rows["adj"]["bleu_ci"]).all()


def test_evaluate_resamples_users_of_a_dataset_and_sessions_of_an_old_one(made_up_log, tmp_path):
    """What `evaluate --data` does around the model: users from the users file; a dataset
    prepared before users files existed still evaluates, over sessions, and says so."""
    from mtn_keras.data.dataset_writer import prepare
    from mtn_keras.data.prepared import load_split, load_users
    from mtn_keras.scorecard.evaluation import bootstrap_groups, bootstrap_line, score_with_anchors

    out = tmp_path / "data"
    prepare([str(made_up_log)], str(out), split=(60, 20, 20), split_by="user", progress=False)
    sessions = load_split(out, "test")
    for users, unit in ((load_users(out, "test"), "users"), (None, "sessions")):
        groups, note = bootstrap_groups(sessions, users, 100)
        scores, anchors = score_with_anchors(
            "online", session_pairs(sessions), {"online": online}, None, 5, 64, groups, 100
        )
        assert "sr@5_ci" in scores and "bleu_ci" in anchors["copy-last"]
        line = bootstrap_line(note)
        assert note["bootstrap"]["unit"] == unit and f" evaluated {unit} " in line
        assert ("records no users" in line) == (unit == "sessions")
    assert note["bootstrap"]["units"] == len(sessions)
    assert bootstrap_groups(sessions, None, 0)[1] == {} and bootstrap_line({}) is None
    (out / "test.users").unlink()
    assert load_users(out, "test") is None


def test_a_bootstrap_without_the_units_of_the_pairs_is_refused():
    sessions, _ = made_up_users(5)
    with pytest.raises(ValueError, match="unit .* of every pair"):
        evaluate_suggesters(
            session_pairs(sessions), {"online": online}, progress=False, resamples=9
        )


def test_a_suggester_that_reads_histories_is_refused_pairs_without_them():
    sessions, _ = made_up_users(5)

    def reader(contexts, histories):
        return [[] for _ in contexts]

    reading_history(reader)
    with pytest.raises(ValueError, match="suggester reader reads histories"):
        evaluate_suggesters(session_pairs(sessions), {"reader": reader}, progress=False)
