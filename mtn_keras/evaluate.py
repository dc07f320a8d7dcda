"""`python -m mtn_keras.evaluate --model DIR (--data DIR --split test | --input LOG ...)`:
BLEU, n-gram precisions, SR@1/SR@5, MRR@5, SR@5 on new next queries, what the shown lists
hold, and perplexity of a trained model: its ranked suggestions (when it has a ranking) and
its beam's alone, with the copy-last and adj anchors (adj filtered as the model is) scored on
the same pairs; JSON, Table 2 style markdown tables and a chart. An exported SavedModel
(`default` included) is scored through its `suggest` signature: every suggestion metric, no
perplexity (that needs the Keras model of a run folder). Each suggestion figure comes with its
95% interval from a bootstrap over the evaluated users (over sessions for a dataset that
records no users). With `--prefix 2,4,6` it scores `complete` instead: SR@5 and MRR@5 when
the first 2, 4 or 6 characters of the next query are typed (and a session's first query's
first 4 after an empty session), beside the most popular completion anchor (MPC)."""

import argparse
import sys
from pathlib import Path

import numpy as np

from mtn_keras.artifacts import ModelDirError, load_trained
from mtn_keras.cli import (
    add_decode_arguments,
    add_verbose,
    decode_config,
    fail,
    file_name,
    guarded,
    needs_tensorflow,
    non_negative_int,
    positive_int,
)
from mtn_keras.config import DecodeConfig
from mtn_keras.data.history import HISTORY_SIZE, PairHistories
from mtn_keras.data.logs import InputError, check_inputs
from mtn_keras.data.prepare import load_split, load_users
from mtn_keras.data.sessions import (
    PROTOCOLS,
    Protocol,
    line_starts,
    line_users,
    protocol_lines,
    sessions_from_logs,
)
from mtn_keras.outputs import OutputError, check_writable
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.rules import log_follows
from mtn_keras.scorecard import (
    Adj,
    CopyLast,
    History,
    batched,
    bleu_chart,
    evaluate_suggesters,
    history_table,
    markdown_table,
    model_report,
    pair_groups,
    pair_histories,
    perplexity,
    quality_table,
    session_pairs,
    table_rows,
    write_json,
)
from mtn_keras.scorecard.quality import filtered
from mtn_keras.serving.savedmodel import (
    DEFAULT,
    SavedModelError,
    bundled_model,
    call,
    export_settings,
    kind,
    load,
    resolve,
)
from mtn_keras.suggest import MODEL_HELP, unfit_option

BOOTSTRAP_SEED = 0
HISTORY = HISTORY_SIZE  # the earlier queries a pair's history passes on


def model_suggester(suggest_strings, k=None, history=False):
    """A batch suggester over a suggest graph (the service's, or a SavedModel's signature):
    contexts -> lists of (text, score), the first `k` of each (default: all). With
    `history`, the graph is a `suggest_with_history` and the suggester reads the pairs'
    histories too (their last HISTORY queries)."""
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
        earlier = left_padded([h[-HISTORY:] for h in histories])
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
    HISTORY queries)."""
    import tensorflow as tf

    def texts(result):
        return [[t.decode() for t in row[:k] if t] for row in np.asarray(result["suggestions"])]

    def complete(contexts, prefixes):
        session = tf.constant(left_padded(contexts), tf.string)
        return texts(complete_strings(session, tf.constant(prefixes, tf.string)))

    def complete_with_history(contexts, prefixes, histories):
        session = tf.constant(left_padded(contexts), tf.string)
        earlier = tf.constant(left_padded([h[-HISTORY:] for h in histories]), tf.string)
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
    )


def prefix_sizes(text):
    """`2,4,6` -> (2, 4, 6): the characters typed, for argparse."""
    sizes = tuple(int(size) for size in text.split(","))
    if not sizes or min(sizes) < 1:
        raise ValueError(text)
    return sizes


def model_perplexity(model, sessions, vocab, batch_size=64):
    """exp of the mean next-query token NLL (teacher forced, copy head included)."""
    from mtn_keras.data.pipeline import make_dataset

    total, count = 0.0, 0.0
    dataset = make_dataset(sessions, vocab, model.config.max_query_tokens, batch_size)
    for x, y in dataset:
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.evaluate", description=__doc__)
    parser.add_argument("--model", type=file_name, required=True, help=MODEL_HELP)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", type=file_name, help="a prepared dataset directory")
    source.add_argument(
        "--input", type=file_name, nargs="+", help="raw log file(s), put through the same protocol"
    )
    parser.add_argument("--split", default="test", help="split of --data (default test)")
    parser.add_argument(
        "--format", default="aol", choices=["aol", "excite"], help="format of --input"
    )
    parser.add_argument(
        "--protocol",
        default="paper",
        choices=PROTOCOLS,
        help="session protocol of --input: paper (sessions of 3..5 queries) or "
        "all (sessions of 2+ queries, windowed; see `prepare`) (default paper)",
    )
    parser.add_argument(
        "--train-data",
        type=file_name,
        help="prepared dataset whose train split fits adj "
        "(default: --data, else the data the model was trained on)",
    )
    add_decode_arguments(parser)
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=1000,
        metavar="N",
        help="resamples of the evaluated users behind each figure's 95%% interval "
        "(default 1000; 0: no intervals)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="replay each user in time order with their earlier queries as history: every "
        "figure with and without it (NAME + history, through suggest_with_history, or "
        "complete_with_history with --prefix), and the model-free history anchor (with "
        "--prefix: history then MPC)",
    )
    parser.add_argument(
        "--prefix",
        type=prefix_sizes,
        metavar="N,N,...",
        help="score `complete` instead of `suggest`: the next query's first N characters typed "
        "(and a session's first query's first 4 after an empty session), beside MPC; "
        "no chart",
    )
    parser.add_argument("--json", type=file_name, help="write the report as JSON here")
    parser.add_argument("--markdown", type=file_name, help="write the Table 2 style table here")
    parser.add_argument("--chart", type=file_name, help="write the BLEU bar chart (PNG) here")
    add_verbose(parser)
    args = parser.parse_args(argv)
    decoding = decode_config(args)
    try:
        exported = kind(args.model) == "savedmodel"  # before TensorFlow's seconds of import
        settings = export_settings(resolve(args.model)) if exported else {}
        if exported and (reason := unfit_option(decoding, settings)):
            raise SavedModelError(reason)
    except SavedModelError as error:
        return fail("evaluate", error, args.verbose)
    if code := needs_tensorflow("evaluate", args.verbose):
        return code
    try:
        for flag in ("json", "markdown", "chart"):  # before the evaluation, not after it
            if getattr(args, flag):
                check_writable(getattr(args, flag), f"--{flag}")
        trained = None if exported else load_trained(args.model)
        config = trained.config if trained else None
        histories = earlier = None
        if args.data:
            sessions = load_split(args.data, args.split)
            users = load_users(args.data, args.split)
            if args.history:
                earlier = PairHistories.load(args.data, args.split)
                if earlier is None:
                    raise ValueError(
                        f"{args.data} keeps no users' histories: prepare it again for --history"
                    )
                histories = pair_histories(sessions, earlier)
        else:
            check_inputs(args.input)
            limits = vars(config) if config else settings  # the sizes the model reads
            sizes = {
                name: limits[name] for name in ("max_queries", "max_query_tokens") if name in limits
            }
            protocol = Protocol.named(args.protocol, **sizes)
            rows = [] if args.history else None
            kept = sessions_from_logs(args.input, args.format, protocol, history=rows)
            sessions = protocol_lines((s.queries for s in kept), protocol)
            users = line_users(kept, protocol)
            if args.history:
                by_user = {}
                for user, _, query in rows:
                    by_user.setdefault(user, []).append(query)
                earlier = PairHistories(by_user, users, line_starts(kept, protocol), HISTORY)
                histories = pair_histories(sessions, earlier)
        train_dir = args.train_data or args.data or (trained.data_dir if trained else None)
        train_sessions = load_split(train_dir, "train") if train_dir else None
        if warning := overlap_warning(sessions, train_sessions, train_dir):
            print(f"evaluate: warning: {warning}", file=sys.stderr)
        if not train_sessions:
            print(
                "evaluate: no adj row: the adj anchor is fitted on a prepared train split, and "
                "none is at hand (give --train-data DIR)",
                file=sys.stderr,
            )
        if args.prefix:
            report = completions(
                resolve(args.model) if exported else None,
                trained,
                decoding,
                sessions,
                train_sessions,
                users,
                args.prefix,
                args,
                earlier,
            )
        elif exported:
            name = savedmodel_name(resolve(args.model))
            report = evaluate_savedmodel(
                resolve(args.model),
                sessions,
                train_sessions,
                decoding.k,
                args.batch_size,
                users,
                args.bootstrap,
                histories,
            )
        else:
            name = trained.name
            report = evaluate(
                trained,
                sessions,
                train_sessions,
                decoding,
                args.batch_size,
                users,
                args.bootstrap,
                histories,
            )
    except (ModelDirError, SavedModelError, InputError, OutputError, OSError, ValueError) as error:
        return fail("evaluate", error, args.verbose)
    if args.prefix:
        return write_completions(report, args)
    rows = table_rows({name: report})
    table = markdown_table(rows) + "\n" + quality_table(rows)
    if split := history_table(rows):
        table += "\n" + split
    print(table, end="")
    if exported:
        print(
            f"pairs {report['pairs']}  perplexity: only for a run folder of train (a "
            "SavedModel has its signatures, not the Keras model that gives token losses)"
        )
    else:
        print(
            f"pairs {report['pairs']}  perplexity {report['perplexity']:.2f}  "
            f"size {report['size_mb']:.1f} MB"
        )
    write_report(report, table, args)
    if args.chart:
        bleu_chart(rows, args.chart)
    return 0


def write_report(report, table, args):
    """Prints the intervals' line and writes the report and its table where --json and
    --markdown say."""
    if note := bootstrap_line(report):
        print(note)
    if args.json:
        write_json(report, args.json)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(table + (f"\n{note}\n" if note else ""))


def write_completions(report, args):
    """Prints the `--prefix` table and writes it where --json and --markdown say."""
    from mtn_keras.scorecard.completion import completion_table

    table = completion_table({case: rows for case, rows in report.items() if case != "bootstrap"})
    print(table, end="")
    write_report(report, table, args)
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, "evaluate"))
