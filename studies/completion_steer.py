"""How far the session can steer completion, on the validation users: with the first
characters of the next query typed, after its session and in an empty session, every
candidate the serving graph ranks (`candidate_table`), and per case how often the next query
is in the log at all, how often it is among the candidates (what any ranking can reach),
SR@5 in the ranker's order, and SR@5 when the candidates the log ties to the session (they
followed one of its queries, came later in a session with one, or followed a query sharing
the last one's rarest words) are weighted up by W. With the session against without: the
difference and its 95% interval from a bootstrap over sessions (docs/ranking.md, "Where the
session steers completion").

Run: python -m studies.completion_steer --run runs/default --data data/aol-90/valid.tsv
"""

import argparse

import numpy as np
import tensorflow as tf

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.history import HISTORY_SIZE
from mtn_keras.data.text import normalise
from mtn_keras.ranking.build import ranker_probabilities
from mtn_keras.ranking.features import FEATURES
from mtn_keras.scorecard.bootstrap import resample_counts
from mtn_keras.serving.steps import SuggestionSteps
from mtn_keras.training.artifacts import load_trained
from studies.beyond_log import pairs_of

TIED = ("follow_last", "follow_earlier", "later_session", "neighbour")  # the log ties it
WEIGHTS = (1, 2, 4)
BATCH = 64


def candidates(table, rows):
    """Per row (context, typed, next query): its valid candidates' texts and features."""
    found = []
    for start in range(0, len(rows), BATCH):
        part = rows[start : start + BATCH]
        width = max(1, *(len(context) for context, _, _ in part))
        sessions = [[""] * (width - len(context)) + context for context, _, _ in part]
        out = table(
            tf.constant(sessions),
            tf.constant([typed for _, typed, _ in part]),
            tf.fill([len(part), HISTORY_SIZE], ""),
        )
        texts, valid, features = (out[k].numpy() for k in ("texts", "valid", "features"))
        for row in range(len(part)):
            keep = np.nonzero(valid[row])[0]
            found.append(([texts[row, j].decode() for j in keep], features[row, keep]))
    return found


def top5_hits(found, probabilities, targets, weight):
    """Per row, whether the next query is among the 5 best distinct of its candidates
    (`found`, with the ranker's `probabilities`), the log's tied ones weighted by `weight`."""
    tied = [FEATURES.index(name) for name in TIED]
    hits = np.zeros(len(targets), bool)
    for row, ((texts, features), probs, target) in enumerate(zip(found, probabilities, targets)):
        probs = np.where((features[:, tied] > 0).any(axis=1), probs * weight, probs)
        best = list(dict.fromkeys(texts[j] for j in np.argsort(-probs, kind="stable")))[:5]
        hits[row] = target in best
    return hits


def ranked(ranker, found):
    """The ranker's probabilities of every row's candidates, in one call."""
    sizes = [len(texts) for texts, _ in found]
    features = np.concatenate([features for _, features in found])
    return np.split(ranker_probabilities(ranker, features), np.cumsum(sizes)[:-1])


def difference_interval(with_session, without, units):
    """The 95% interval of SR@5 with the session minus without, sessions resampled."""
    ids, unit = np.unique(units, return_inverse=True)
    sums = np.stack([np.bincount(unit, h.astype(float), len(ids)) for h in (with_session, without)])
    sizes = np.bincount(unit, minlength=len(ids))
    draws = resample_counts(len(ids), 1000)
    figures = 100 * (draws @ (sums[0] - sums[1])) / (draws @ sizes)
    return np.percentile(figures, [2.5, 97.5])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a run folder with a ranking")
    parser.add_argument("--data", required=True, help="the validation sessions (valid.tsv)")
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--typed", default="5", help="characters typed, comma-separated")
    args = parser.parse_args(argv)
    trained = load_trained(args.run)
    steps = SuggestionSteps(trained.model, trained.vocab.tokens, DecodeConfig(), trained.ranking)
    spec = [tf.TensorSpec([None, None], tf.string), tf.TensorSpec([None], tf.string)]
    spec.append(tf.TensorSpec([None, HISTORY_SIZE], tf.string))
    table = tf.function(steps.candidate_table, autograph=False, input_signature=spec)
    in_log = set(trained.ranking.index.queries)
    pairs = pairs_of(args.data, args.every)
    head = " | ".join(f"SR@5, W {w}" for w in WEIGHTS)
    print(f"| typed | session | pairs | in the log | among the candidates | {head} |")
    print("| --- | --- | ---: | ---: | ---: |" + " ---: |" * len(WEIGHTS))
    for chars in (int(c) for c in args.typed.split(",")):
        kept = [(n, c, t) for n, c, t in pairs if len(t) > chars]
        targets = [normalise(t) for _, _, t in kept]
        hits = {}
        for empty in (False, True):
            rows = [([] if empty else c, t[:chars], t) for _, c, t in kept]
            found = candidates(table, rows)
            share = [
                100 * np.mean(x)
                for x in (
                    [t in in_log for t in targets],
                    [t in f[0] for f, t in zip(found, targets)],
                )
            ]
            probabilities = ranked(trained.ranking.ranker, found)
            sr = [top5_hits(found, probabilities, targets, w) for w in WEIGHTS]
            hits[empty] = sr[0]
            cells = " | ".join(f"{100 * h.mean():.2f}" for h in sr)
            name = "empty" if empty else "its own"
            print(
                f"| {chars} | {name} | {len(kept):,} | {share[0]:.2f} | {share[1]:.2f} | {cells} |"
            )
        low, high = difference_interval(hits[False], hits[True], [n for n, _, _ in kept])
        gain = 100 * (hits[False].mean() - hits[True].mean())
        print(f"| {chars} | its own - empty | | | | {gain:+.2f} [{low:+.2f}, {high:+.2f}] |")


if __name__ == "__main__":
    main()
