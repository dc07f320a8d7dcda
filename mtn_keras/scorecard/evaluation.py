"""Scoring a model on session pairs, the work behind `evaluate` and `compare`: suggesters and
completers that adapt a Keras run or a SavedModel to the scorecard, perplexity, the anchors
beside them, bootstrap groups and the overlap warning."""

from pathlib import Path

import numpy as np

from mtn_keras.base.config import DecodeConfig
from mtn_keras.data.history import latest
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.rules import log_follows
from mtn_keras.scorecard import (
    Adj,
    CopyLast,
    History,
    batched,
    evaluate_suggesters,
    model_report,
    pair_groups,
    perplexity,
    session_pairs,
)
from mtn_keras.scorecard.quality import filtered
from mtn_keras.serving.savedmodel import (
    DEFAULT,
    SavedModelError,
    bundled_model,
    call,
    export_settings,
    load,
)

BOOTSTRAP_SEED = 0


def model_suggester(suggest_strings, k=None, history=False):
    """A batch suggester over a suggest graph (the service's, or a SavedModel's signature):
    contexts -> lists of (text, score), the first `k` of each (default: all). With
    `history`, the graph is a `suggest_with_history` and the suggester reads the pairs'
    histories too (their `latest` queries)."""
    import tensorflow as tf

    def answer(result):
        texts, scores = np.asarray(result["suggestions"]), np.asarray(result["scores"])
        return [
            [(t.decode(), float(s)) for t, s in zip(row_t[:k], row_s[:k]) if t]
            for row_t, row_s in zip(texts, scores)
        ]

    def suggest(contexts):
        return answer(suggest_strings(tf.constant(left_padded(contexts))))

    def suggest_with_history(contexts, histories):
        earlier = left_padded([latest(h) for h in histories])
        return answer(
            suggest_strings(tf.constant(left_padded(contexts)), tf.constant(earlier, tf.string))
        )

    if not history:
        return suggest
    suggest_with_history.reads_history = True
    return suggest_with_history


def left_padded(rows):
    """Lists of strings -> one rectangle, "" before the shorter ones (at least one column)."""
    width = max([1, *map(len, rows)])
    return [[""] * (width - len(row)) + list(row) for row in rows]


def model_completer(complete_strings, k, history=False):
    """A batch completer over a complete graph (the service's, or a SavedModel's signature):
    (contexts, prefixes) -> lists of the first `k` texts; with `history`, the graph is a
    `complete_with_history` and the completer takes the rows' histories too (their last
    queries, `latest`)."""
    import tensorflow as tf

    def texts(result):
        return [[t.decode() for t in row[:k] if t] for row in np.asarray(result["suggestions"])]

    def complete(contexts, prefixes):
        session = tf.constant(left_padded(contexts), tf.string)
        return texts(complete_strings(session, tf.constant(prefixes, tf.string)))

    def complete_with_history(contexts, prefixes, histories):
        session = tf.constant(left_padded(contexts), tf.string)
        earlier = tf.constant(left_padded([latest(h) for h in histories]), tf.string)
        return texts(complete_strings(session, tf.constant(prefixes, tf.string), earlier))

    return complete_with_history if history else complete


def completions(
    model_path, trained, decoding, sessions, train_sessions, users, chars, args, histories=None
):
    """The `--prefix` report (scorecard.completion) of a run folder's service (`trained`)
    or of the SavedModel at `model_path`, through `complete`; with the sessions' `histories`
    (their users' earlier queries) also through `complete_with_history`."""
    from mtn_keras.scorecard.completion import completion_report

    if trained is not None:
        from mtn_keras.serving.service import SuggestionService

        service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
        name, complete, with_history = trained.name, service.complete, None
        if histories is not None:
            if trained.ranking is None:
                raise ValueError(f"{trained.name} has no ranking: history needs one (`rank`)")
            with_history = service.complete_with_history
    else:
        wanted = ["complete"] + (["complete_with_history"] if histories is not None else [])
        loaded, _ = load(model_path, wanted)
        if histories is not None and "complete_with_history" not in loaded.signatures:
            raise SavedModelError(
                f"{model_path} has no complete_with_history signature (export it again to "
                "use --history)"
            )
        name = savedmodel_name(model_path)

        def complete(session, prefix):
            return call(loaded, model_path, "complete", session=session, prefix=prefix)

        def with_history(session, prefix, history):
            return call(
                loaded,
                model_path,
                "complete_with_history",
                session=session,
                prefix=prefix,
                history=history,
            )

    if not train_sessions:
        raise ValueError("--prefix needs the training split that MPC counts (--train-data)")
    _, note = bootstrap_groups(sessions, users, args.bootstrap)
    return note | completion_report(
        model_completer(complete, decoding.k),
        name,
        sessions,
        train_sessions,
        users,
        chars,
        decoding.k,
        args.batch_size,
        args.bootstrap,
        BOOTSTRAP_SEED,
        histories,
        model_completer(with_history, decoding.k, history=True) if histories is not None else None,
        args.typos,
        args.every,
    )


def prefix_sizes(text):
    """`2,4,6` -> (2, 4, 6): the characters typed, for argparse."""
    sizes = tuple(int(size) for size in text.split(","))
    if not sizes or min(sizes) < 1:
        raise ValueError(text)
    return sizes


def model_perplexity(model, sessions, vocab, batch_size=64):
    """exp of the mean next-query token NLL (teacher forced, copy head included)."""
    from mtn_keras.data.batches import SessionBatches

    total, count = 0.0, 0.0
    for x, y in SessionBatches(sessions, vocab, model.config.max_query_tokens, batch_size):
        nll, _, _, weight = model.token_losses(x, y, model(x, training=False))
        total += float((nll * weight).numpy().sum())
        count += float(weight.numpy().sum())
    return perplexity(total, count)


def evaluate(
    trained,
    sessions,
    train_sessions=None,
    decoding=DecodeConfig(),
    batch_size=64,
    users=None,
    bootstrap=1000,
    histories=None,
):
    """The report of one trained model on `sessions` (every pair of every session): its
    suggestions as `decoding` says, and with a ranking also its beam's alone ("NAME (beam)").
    `users` (one per session, or None) and `bootstrap` (resamples, 0: none) give the
    intervals, see `bootstrap_groups`. With `histories` (one per pair, the user's earlier
    queries), also its suggestions with them ("NAME + history") and the `history` anchor."""
    from dataclasses import replace

    from mtn_keras.serving.service import SuggestionService

    pairs = session_pairs(sessions)
    if not pairs:
        raise ValueError("no (context, next query) pair to evaluate")
    k = decoding.k
    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    suggesters = {trained.name: model_suggester(service.suggest)}
    if histories is not None:
        suggesters[f"{trained.name} + history"] = model_suggester(
            service.suggest_with_history, history=True
        )
    if service.hybrid is not None:
        beam = SuggestionService(
            trained.model, trained.vocab.tokens, replace(decoding, source="beam")
        )
        suggesters[f"{trained.name} (beam)"] = model_suggester(beam.suggest)
    groups, note = bootstrap_groups(sessions, users, bootstrap)
    scores, anchors = score_with_anchors(
        trained.name, pairs, suggesters, train_sessions, k, batch_size, groups, bootstrap, histories
    )
    ppl = model_perplexity(trained.model, sessions, trained.vocab, batch_size)
    return model_report(scores, anchors, ppl, round(trained.model.size_mb, 3)) | note


def evaluate_savedmodel(
    path,
    sessions,
    train_sessions=None,
    k=None,
    batch_size=64,
    users=None,
    bootstrap=1000,
    histories=None,
):
    """The report of the exported SavedModel at `path` (already resolved) on `sessions`,
    through its `suggest` signature as docs/contracts.md has it: the first `k` of its lists
    (default DecodeConfig's k; at most the export's), the anchors beside them, no perplexity
    and no size (a SavedModel has no Keras model); intervals as `evaluate`'s. With
    `histories`, also through `suggest_with_history` ("NAME + history")."""
    pairs = session_pairs(sessions)
    if not pairs:
        raise ValueError("no (context, next query) pair to evaluate")
    signatures = ["suggest"] + (["suggest_with_history"] if histories is not None else [])
    loaded, _ = load(path, signatures)
    if histories is not None and "suggest_with_history" not in loaded.signatures:
        raise SavedModelError(
            f"{path} has no suggest_with_history signature (export it again to use --history)"
        )
    name = savedmodel_name(path)
    k = min(k or DecodeConfig().k, export_settings(path).get("k", DecodeConfig().k))
    suggesters = {
        name: model_suggester(lambda session: call(loaded, path, "suggest", session=session), k)
    }
    if histories is not None:
        suggesters[f"{name} + history"] = model_suggester(
            lambda session, history: call(
                loaded, path, "suggest_with_history", session=session, history=history
            ),
            k,
            history=True,
        )
    groups, note = bootstrap_groups(sessions, users, bootstrap)
    scores, anchors = score_with_anchors(
        name, pairs, suggesters, train_sessions, k, batch_size, groups, bootstrap, histories
    )
    return model_report(scores, anchors, None, None) | note


def bootstrap_groups(sessions, users, resamples):
    """The unit each pair is resampled with (its user, or its session when `users` is None)
    and the report's `bootstrap` entry: resamples, seed, unit (`users` or `sessions`) and how
    many units (empty without resamples)."""
    groups = pair_groups(sessions, users)
    if not resamples:
        return groups, {}
    unit = "users" if users is not None else "sessions"
    entry = {"resamples": resamples, "seed": BOOTSTRAP_SEED, "unit": unit}
    return groups, {"bootstrap": entry | {"units": len(set(groups))}}


def bootstrap_line(report):
    """One line that says what the intervals resampled, or None without intervals."""
    entry = report.get("bootstrap")
    if not entry:
        return None
    line = (
        f"[low, high]: 95% interval, bootstrap over the {entry['units']:,} evaluated "
        f"{entry['unit']} ({entry['resamples']:,} resamples, seed {entry['seed']})"
    )
    if entry["unit"] == "sessions":
        line += "; the dataset records no users (prepare it again to resample users)"
    return line


def savedmodel_name(path):
    """The row name of a SavedModel: `default` for the bundled one (installed, its folder is
    mtn_tui/default_model), else its folder's, or that of the folder holding `savedmodel/`."""
    path = Path(path)
    if path == bundled_model():
        return DEFAULT
    return path.parent.name if path.name == "savedmodel" else path.name


def score_with_anchors(
    name, pairs, suggesters, train_sessions, k, batch_size, groups=None, resamples=0, histories=None
):
    """The scores of suggester `name` on `pairs` and, scored on the same pairs, those of the
    other `suggesters` and of the anchors (adj only with `train_sessions`, history only with
    `histories`, one per pair); with `resamples`, their intervals over the units of
    `groups`."""
    phrases = blocked_phrases()
    suggesters["copy-last"] = batched(CopyLast(), k)
    if train_sessions:
        suggesters["adj"] = filtered(batched(Adj().fit(train_sessions), 4 * k), phrases, k)
    if histories is not None:
        suggesters["history"] = batched(History(), k)
    scores = evaluate_suggesters(
        pairs,
        suggesters,
        batch_size=batch_size,
        phrases=phrases,
        groups=groups,
        resamples=resamples,
        seed=BOOTSTRAP_SEED,
        histories=histories,
        follows=log_follows(train_sessions or []) if histories is not None else frozenset(),
    )
    anchors = {other: scores.pop(other) for other in list(scores) if other != name}
    return scores[name], anchors


def overlap_warning(sessions, train_sessions, train_dir, share=0.1):
    """A warning when more than `share` of the evaluated sessions are in the train split
    that fits adj (which then scores its own training pairs), else None."""
    if not sessions or not train_sessions:
        return None
    seen = set(map(tuple, train_sessions))
    found = sum(tuple(session) in seen for session in sessions)
    if found <= share * len(sessions):
        return None
    return (
        f"{found:,} of the {len(sessions):,} evaluated sessions are in the train split of "
        f"{train_dir}, which fits adj: its scores are inflated (pass the --train-data of "
        "the dataset the evaluated split comes from)"
    )
