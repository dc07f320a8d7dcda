"""`python -m mtn_keras.evaluate --model DIR (--data DIR --split test | --input LOG ...)`:
BLEU, n-gram precisions, SR@1/SR@5, MRR@5, SR@5 on new next queries, what the shown lists
hold, and perplexity of a trained model: its ranked suggestions (when it has a ranking) and
its beam's alone, with the copy-last and adj anchors (adj filtered as the model is) scored on
the same pairs; JSON, Table 2 style markdown tables and a chart."""

import argparse
import os
import sys

from mtn_keras.artifacts import ModelDirError, load_trained
from mtn_keras.cli import add_decode_arguments, add_verbose, decode_config, fail, needs_tensorflow, positive_int
from mtn_keras.config import DecodeConfig
from mtn_keras.data.logs import InputError, check_inputs
from mtn_keras.data.prepare import load_split
from mtn_keras.data.sessions import PROTOCOLS, Protocol, protocol_lines, sessions_from_logs
from mtn_keras.scorecard import (
    Adj, CopyLast, batched, bleu_chart, evaluate_suggesters, markdown_table, model_report,
    perplexity, quality_table, session_pairs, table_rows, write_json,
)
from mtn_keras.scorecard.quality import filtered
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.outputs import OutputError, check_writable


def model_suggester(service):
    """A batch suggester over the SavedModel graph: contexts -> lists of (text, score)."""
    import tensorflow as tf

    def suggest(contexts):
        width = max(len(c) for c in contexts)
        padded = [[""] * (width - len(c)) + list(c) for c in contexts]
        result = service.suggest(tf.constant(padded))
        texts, scores = result["suggestions"].numpy(), result["scores"].numpy()
        return [
            [(t.decode(), float(s)) for t, s in zip(row_t, row_s) if t]
            for row_t, row_s in zip(texts, scores)
        ]

    return suggest


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


def evaluate(trained, sessions, train_sessions=None, decoding=DecodeConfig(), batch_size=64):
    """The report of one trained model on `sessions` (every pair of every session): its
    suggestions as `decoding` says, and with a ranking also its beam's alone ("NAME (beam)")."""
    from dataclasses import replace

    from mtn_keras.serving.service import SuggestionService

    pairs = session_pairs(sessions)
    if not pairs:
        raise ValueError("no (context, next query) pair to evaluate")
    k = decoding.k
    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    suggesters = {trained.name: model_suggester(service)}
    if service.hybrid is not None:
        beam = SuggestionService(trained.model, trained.vocab.tokens, replace(decoding, source="beam"))
        suggesters[f"{trained.name} (beam)"] = model_suggester(beam)
    phrases = blocked_phrases()
    suggesters["copy-last"] = batched(CopyLast(), k)
    if train_sessions:
        suggesters["adj"] = filtered(batched(Adj().fit(train_sessions), 4 * k), phrases, k)
    scores = evaluate_suggesters(pairs, suggesters, batch_size=batch_size, phrases=phrases)
    anchors = {name: scores.pop(name) for name in list(scores) if name != trained.name}
    ppl = model_perplexity(trained.model, sessions, trained.vocab, batch_size)
    return model_report(scores[trained.name], anchors, ppl, round(trained.model.size_mb, 3))


def overlap_warning(sessions, train_sessions, train_dir, share=0.1):
    """A warning when more than `share` of the evaluated sessions are in the train split
    that fits adj (which then scores its own training pairs), else None."""
    if not sessions or not train_sessions:
        return None
    seen = set(map(tuple, train_sessions))
    found = sum(tuple(session) in seen for session in sessions)
    if found <= share * len(sessions):
        return None
    return (f"{found:,} of the {len(sessions):,} evaluated sessions are in the train split of "
            f"{train_dir}, which fits adj: its scores are inflated (pass the --train-data of "
            "the dataset the evaluated split comes from)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.evaluate", description=__doc__)
    parser.add_argument("--model", required=True, help="a directory written by mtn_keras.train")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", help="a prepared dataset directory")
    source.add_argument("--input", nargs="+", help="raw log file(s), put through the same protocol")
    parser.add_argument("--split", default="test", help="split of --data (default test)")
    parser.add_argument("--format", default="aol", choices=["aol", "excite"], help="format of --input")
    parser.add_argument("--protocol", default="paper", choices=PROTOCOLS,
                        help="session protocol of --input: paper (sessions of 3..5 queries) or "
                        "all (sessions of 2+ queries, windowed; see `prepare`) (default paper)")
    parser.add_argument("--train-data", help="prepared dataset whose train split fits adj "
                        "(default: --data, else the data the model was trained on)")
    add_decode_arguments(parser)
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--json", help="write the report as JSON here")
    parser.add_argument("--markdown", help="write the Table 2 style table here")
    parser.add_argument("--chart", help="write the BLEU bar chart (PNG) here")
    add_verbose(parser)
    args = parser.parse_args(argv)
    decoding = decode_config(args)
    if code := needs_tensorflow("evaluate", args.verbose):
        return code
    try:
        for flag in ("json", "markdown", "chart"):  # before the evaluation, not after it
            if getattr(args, flag):
                check_writable(getattr(args, flag), f"--{flag}")
        trained = load_trained(args.model)
        if args.data:
            sessions = load_split(args.data, args.split)
        else:
            check_inputs(args.input)
            protocol = Protocol.named(args.protocol, max_queries=trained.config.max_queries,
                                      max_query_tokens=trained.config.max_query_tokens)
            kept = sessions_from_logs(args.input, args.format, protocol)
            sessions = protocol_lines((s.queries for s in kept), protocol)
        train_dir = args.train_data or args.data or trained.data_dir
        train_sessions = load_split(train_dir, "train") if train_dir else None
        if warning := overlap_warning(sessions, train_sessions, train_dir):
            print(f"evaluate: warning: {warning}", file=sys.stderr)
        report = evaluate(trained, sessions, train_sessions, decoding, args.batch_size)
    except (ModelDirError, InputError, OutputError, OSError, ValueError) as error:
        return fail("evaluate", error, args.verbose)
    rows = table_rows({trained.name: report})
    table = markdown_table(rows) + "\n" + quality_table(rows)
    print(table, end="")
    print(f"pairs {report['pairs']}  perplexity {report['perplexity']:.2f}  size {report['size_mb']:.1f} MB")
    if args.json:
        write_json(report, args.json)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(table)
    if args.chart:
        bleu_chart(rows, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
