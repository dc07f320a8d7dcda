"""Building a model's ranking: the index from the training split, the ranker fitted on the
candidates of the validation split (with and without typed prefixes, each with its user's
earlier queries), the threshold tuned there too."""

import zlib

import numpy as np

from mtn_keras.data.history import HISTORY_SIZE
from mtn_keras.data.pairs import session_pairs
from mtn_keras.ranking import Ranking
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.features import FEATURES
from mtn_keras.ranking.log_index import QueryLogIndex
from mtn_keras.ranking.ranker import choose_threshold, fit_ranker, threshold_curve
from mtn_keras.ranking.rules import word_set

HISTORY = HISTORY_SIZE  # the history columns fed to the candidate table

PREFIX_CHARS = (2, 4, 6)
TYPED_EVERY = 3  # one pair in three is typed too: fitting costs a third more, not thrice
PLAIN_EVERY = 2  # one pair in two again without its history, for users without one
# The share of the validation SR@k each threshold keeps (ranker.choose_threshold), on
# out-of-fold probabilities. A list of the user's own earlier queries costs a searcher little
# when unsure, so it is cut less. (Chosen once by test-user figures, kept; see
# docs/ranking.md. The session's own candidates are held to the plain threshold, with a
# history too: HybridRanker.)
KEEP = {"plain": 0.95, "history": 0.99}
FOLDS = 3  # the thresholds are tuned on users the ranker that scores them was not fitted on


def typed_pairs(sessions, histories=None, chars=PREFIX_CHARS):
    """The (context, next query, typed prefix, history) rows the ranker is fitted on: first
    every pair of `session_pairs` with nothing typed (as `suggest` meets it), with its
    user's earlier queries (`histories`, PairHistories, or None); with histories, then one
    pair in PLAIN_EVERY again without them (as a newcomer meets `suggest`); then one in
    TYPED_EVERY again with the first 2, 4 or 6 characters of its next query typed (the
    lengths in turn), and of the sessions' first queries so typed after an empty session
    (as `complete` meets them). Returns the rows, how many untyped rows have histories, and
    each row's line (its session's index)."""
    earlier = (lambda i: histories[i]) if histories is not None else (lambda i: [])
    pairs = [
        (session[: t + 1], session[t + 1], earlier(i), i)
        for i, session in enumerate(sessions)
        for t in range(len(session) - 1)
    ]
    firsts = [([], session[0], earlier(i), i) for i, session in enumerate(sessions) if session]
    plain = []
    if histories is not None:
        plain = [(c, q, "", [], i) for n, (c, q, _, i) in enumerate(pairs) if n % PLAIN_EVERY == 0]
    typed = [
        (context, query, query[: chars[n // TYPED_EVERY % len(chars)]], history, i)
        for n, (context, query, history, i) in enumerate(pairs + firsts)
        if n % TYPED_EVERY == 0
    ]
    untyped = [(context, query, "", history, i) for context, query, history, i in pairs]
    rows = untyped + plain + typed
    return [row[:4] for row in rows], len(plain), [row[4] for row in rows]


def user_folds(units, folds=FOLDS):
    """The fold (0 .. folds-1) of each row's unit (user), by a stable hash of its name."""
    return np.array([zlib.crc32(str(unit).encode()) % folds for unit in units])


def probability(ranker, features):
    """The ranker's probabilities [N] of candidates' features [N, F]."""
    logits = ranker.predict(features, batch_size=4096, verbose=0)[:, 0]
    return 1.0 / (1.0 + np.exp(-logits))


def candidate_rows(candidate_table, rows, batch_size=64):
    """The valid candidates of every (context, next query, prefix, history) row: features
    [N, F], labels [N] (the candidate is the next query), groups [N] (the row's number) and
    keys [N] (its word set). `candidate_table(sessions, prefixes, histories)` gives every
    candidate of a batch of sessions with its features, as the serving graph ranks them
    (SuggestionService.candidate_table)."""
    import tensorflow as tf

    table = tf.function(
        candidate_table,
        input_signature=[
            tf.TensorSpec([None, None], tf.string),
            tf.TensorSpec([None], tf.string),
            tf.TensorSpec([None, HISTORY], tf.string),
        ],
    )
    features, labels, groups, keys = [], [], [], []
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        width = max(1, *(len(context) for context, _, _, _ in batch))
        sessions = [[""] * (width - len(context)) + list(context) for context, _, _, _ in batch]
        prefixes = [prefix for _, _, prefix, _ in batch] + [""] * (batch_size - len(batch))
        sessions += [[""] * width] * (batch_size - len(batch))  # one shape, one compilation
        earlier = [list(history[-HISTORY:]) for _, _, _, history in batch]
        history = [[""] * (HISTORY - len(h)) + h for h in earlier]
        history += [[""] * HISTORY] * (batch_size - len(batch))
        found = table(
            tf.constant(sessions, tf.string, [batch_size, width]),
            tf.constant(prefixes),
            tf.constant(history, tf.string, [batch_size, HISTORY]),
        )
        texts = [[t.decode() for t in row] for row in found["texts"].numpy()]
        valid = found["valid"].numpy()
        values = found["features"].numpy()
        for row, (_, reference, _, _) in enumerate(batch):
            for column in np.nonzero(valid[row])[0]:
                features.append(values[row, column])
                labels.append(texts[row][column] == reference)
                groups.append(start + row)
                keys.append(word_set(texts[row][column]))
    return np.array(features, np.float32), np.array(labels), np.array(groups), keys


def build_ranking(
    table_for,
    train_sessions,
    valid_sessions,
    decoding,
    hidden=16,
    progress=print,
    valid_histories=None,
    valid_users=None,
):
    """A model's `Ranking`: the index of `train_sessions`, and the ranker fitted on the
    candidates of `valid_sessions` (with their users' earlier queries, `valid_histories`,
    a `data.history.PairHistories`, when the dataset has them), where the thresholds are
    tuned too (one for sessions without a history, one with), each on out-of-fold
    probabilities: rankers fitted on FOLDS - 1 folds of the users (`valid_users`, one per
    session; else sessions) score the held-out fold, so the thresholds and the figures in
    ranking.json are not in-sample. `table_for(index)` gives the
    candidate table function of the model ranked with that index (decoded with
    `decoding`, threshold 0; see `candidate_rows`). The validation users are users the
    model never saw, as the product meets them: held-out sessions of training users, added,
    made a worse ranker (docs/ranking.md): the model remembers them, and its scores of their
    next queries mislead."""
    index = QueryLogIndex.build(train_sessions, blocked_phrases())
    progress(f"index: {index.sizes()}")
    pairs = session_pairs(valid_sessions)
    rows, plain, lines = typed_pairs(valid_sessions, valid_histories)
    if valid_histories is not None:
        with_history = sum(bool(history) for _, _, _, history in rows[: len(pairs)])
        progress(f"valid: {with_history:,} of {len(pairs):,} pairs have an earlier query")
    features, labels, groups, keys = candidate_rows(table_for(index), rows)
    progress(
        f"valid: {len(labels)} candidates of {len(rows)} pairs (with and without histories) "
        f"and typed prefixes, {int(labels.sum())} the next query"
    )
    ranker = fit_ranker(features, labels, hidden)
    units = valid_users if valid_users is not None else range(len(valid_sessions))
    folds = user_folds([units[lines[group]] for group in groups])
    probabilities = np.zeros(len(labels))
    for fold in range(FOLDS):
        held = folds == fold
        fitted = fit_ranker(features[~held], labels[~held], hidden)
        probabilities[held] = probability(fitted, features[held])
    progress(f"thresholds: tuned on out-of-fold probabilities ({FOLDS} folds of the users)")
    # The thresholds hold `suggest` only (completions are not held to them): each is tuned
    # on its own untyped rows, without histories and with them (as the model meets users).
    chosen = {}
    spans = {"history": (0, len(pairs)), "plain": (len(pairs), len(pairs) + plain)}
    if not plain:  # no histories: the pairs are the users' without history
        spans = {"plain": (0, len(pairs))}
    for name, (low, high) in spans.items():
        rows_in = (groups >= low) & (groups < high)
        curve = threshold_curve(
            probabilities[rows_in],
            groups[rows_in],
            [key for key, keep in zip(keys, rows_in) if keep],
            labels[rows_in],
            high - low,
            decoding.k,
        )
        threshold = choose_threshold(curve, KEEP[name])
        at = next((point for point in curve if point[0] >= threshold), (threshold, 0.0, 0.0))
        chosen[name] = (threshold, curve[0][1] if curve else 0.0, at)
        progress(
            f"threshold {name} {threshold:.4f}: SR@{decoding.k} {at[1]:.2f}% (all shown "
            f"{chosen[name][1]:.2f}%), coverage {at[2]:.1f}% on {high - low:,} validation pairs"
        )
    threshold, all_shown, at = chosen["plain"]
    info = {
        "features": list(FEATURES),
        "hidden": hidden,
        "index": index.sizes(),
        "fitted_on": {
            "pairs": len(pairs),
            "histories": valid_histories is not None,
            "pairs_without_history": plain,
            "typed_pairs": len(rows) - len(pairs) - plain,
            "candidates": len(labels),
            "positives": int(labels.sum()),
        },
        f"sr@{decoding.k}_all_shown": all_shown,
        f"sr@{decoding.k}": at[1],
        "coverage": at[2],
        "decoding": {
            "beam": decoding.beam,
            "alpha": decoding.length_alpha(ranked=True),
            "filters": list(decoding.filters),
        },
    }
    history_threshold = None
    if "history" in chosen:
        history_threshold, shown, point = chosen["history"]
        info["with_history"] = {
            f"sr@{decoding.k}_all_shown": shown,
            f"sr@{decoding.k}": point[1],
            "coverage": point[2],
        }
    return Ranking(index, ranker, threshold, info, history_threshold)
