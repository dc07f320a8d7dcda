"""Building a model's ranking: the index from the training split, the ranker fitted on the
candidates of the validation split, the threshold tuned there too."""

import numpy as np

from mtn_keras.scorecard.pairs import session_pairs
from mtn_keras.ranking import Ranking
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.features import FEATURES
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.ranker import choose_threshold, fit_ranker, threshold_curve


def candidate_rows(service, pairs, batch_size=64):
    """The valid candidates of every pair: features [N, F], labels [N] (the candidate is
    the next query), groups [N] (the pair's number) and keys [N] (its sorted words)."""
    import tensorflow as tf

    table = tf.function(service.candidate_table)
    features, labels, groups, keys = [], [], [], []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        width = max(len(context) for context, _ in batch)
        sessions = [[""] * (width - len(context)) + list(context) for context, _ in batch]
        sessions += [[""] * width] * (batch_size - len(batch))  # one shape, one compilation
        found = table(tf.constant(sessions))
        texts = [[t.decode() for t in row] for row in found["texts"].numpy()]
        valid = found["valid"].numpy()
        values = found["features"].numpy()
        for row, (_, reference) in enumerate(batch):
            for column in np.nonzero(valid[row])[0]:
                features.append(values[row, column])
                labels.append(texts[row][column] == reference)
                groups.append(start + row)
                keys.append(" ".join(sorted(texts[row][column].split())))
    return np.array(features, np.float32), np.array(labels), np.array(groups), keys


def build_ranking(trained, train_sessions, valid_sessions, decoding, hidden=16, held_out=10,
                  held_pairs=2000, progress=print):
    """The `Ranking` of a trained model: its index of `train_sessions`, and its ranker fitted
    on the candidates of `valid_sessions` (decoded with `decoding`, threshold 0) and of every
    `held_out`-th training session (at most `held_pairs` pairs), whose log evidence comes
    from an index of the other training sessions: on users the model never saw, the next
    query is among the candidates too rarely (9 times in 1,129 validation pairs of the AOL
    dev log) to fit a ranker on them alone. The threshold is tuned on the validation pairs:
    the users the product meets."""
    from mtn_keras.serving import SuggestionService

    phrases = blocked_phrases()
    index = QueryLogIndex.build(train_sessions, phrases)
    progress(f"index: {index.sizes()}")
    rest = [s for i, s in enumerate(train_sessions) if i % held_out]
    sources = {
        "valid": (index, session_pairs(valid_sessions)),
        "held-out training sessions": (QueryLogIndex.build(rest, phrases),
                                       session_pairs(train_sessions[::held_out])[:held_pairs]),
    }
    parts, figures = [], {}
    for name, (part_index, pairs) in sources.items():
        service = SuggestionService(trained.model, trained.vocab.tokens, decoding, Ranking(part_index))
        part = candidate_rows(service, pairs)
        progress(f"{name}: {len(part[1])} candidates of {len(pairs)} pairs, {int(part[1].sum())} the next query")
        parts.append((part, len(pairs)))
        figures[name] = {"pairs": len(pairs), "candidates": len(part[1]), "positives": int(part[1].sum())}
    features = np.concatenate([p[0] for p, _ in parts])
    labels = np.concatenate([p[1] for p, _ in parts])
    ranker = fit_ranker(features, labels, hidden)
    (valid_features, valid_labels, valid_groups, valid_keys), valid_pairs = parts[0]
    logits = ranker.predict(valid_features, batch_size=4096, verbose=0)[:, 0]
    probabilities = 1.0 / (1.0 + np.exp(-logits))
    curve = threshold_curve(probabilities, valid_groups, valid_keys, valid_labels, valid_pairs, decoding.k)
    threshold = choose_threshold(curve)
    at = next((point for point in curve if point[0] >= threshold), (threshold, 0.0, 0.0))
    info = {
        "features": list(FEATURES), "hidden": hidden, "index": index.sizes(), "fitted_on": figures,
        f"sr@{decoding.k}_all_shown": curve[0][1], f"sr@{decoding.k}": at[1], "coverage": at[2],
        "decoding": {"beam": decoding.beam, "alpha": decoding.alpha, "filters": list(decoding.filters)},
    }
    progress(f"threshold {threshold:.4f}: SR@{decoding.k} {at[1]:.2f}% (all shown {curve[0][1]:.2f}%), "
             f"coverage {at[2]:.1f}% on the validation pairs")
    return Ranking(index, ranker, threshold, info)
