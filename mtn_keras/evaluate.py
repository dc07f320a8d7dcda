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
first 4 after an empty session), beside the most popular completion anchor (MPC). With a
train split at hand, each list kind also gets the list measures of docs/quality.md."""

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from mtn_keras.base.files import check_output
from mtn_keras.base.outputs import OutputError
from mtn_keras.base.parsing import non_negative_int, positive_int
from mtn_keras.cli import (
    add_decode_arguments,
    add_model_option,
    add_verbose,
    decode_config,
    fail,
    file_name,
    guarded,
    needs_tensorflow,
    unfit_option,
)
from mtn_keras.client import load
from mtn_keras.client.local import run_folder
from mtn_keras.data.history import PairHistories
from mtn_keras.data.logs import InputError, check_inputs
from mtn_keras.data.pairs import pair_histories
from mtn_keras.data.prepared import load_split, load_users
from mtn_keras.data.replay import replay_logs
from mtn_keras.data.sessions import PROTOCOLS, Protocol
from mtn_keras.model_reports import completions, evaluate, evaluate_savedmodel
from mtn_keras.scorecard import (
    bleu_chart,
    history_table,
    markdown_table,
    quality_table,
    table_rows,
    write_json,
)
from mtn_keras.scorecard.evaluation import bootstrap_line, overlap_warning, prefix_sizes
from mtn_keras.scorecard.list_table import list_table
from mtn_keras.serving.savedmodel import (
    DEFAULT,
    SuggestError,
    export_settings,
    kind,
    model_name,
    resolve,
)
from mtn_keras.training.artifacts import ModelDirError, TrainedModel, load_trained


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.typos or args.every > 1) and not args.prefix:
        parser.error("--typos and --every apply to --prefix only")
    decoding = decode_config(args)
    try:
        _check_files(args)
        exported = kind(args.model) == "savedmodel"  # before TensorFlow's seconds of import
        settings = export_settings(resolve(args.model)) if exported else {}
        if exported and (reason := unfit_option(decoding, settings)):
            raise SuggestError(reason)
    except (SuggestError, InputError, OutputError) as error:
        return fail("evaluate", error, args.verbose)
    if code := needs_tensorflow("evaluate", args.verbose):
        return code
    try:
        trained = None if exported else load_trained(args.model)
        pairs = _pairs(args, vars(trained.config) if trained else settings)
        train_sessions = _train_sessions(args, trained, pairs.sessions)
        name, report = _scored(args, trained, decoding, pairs, train_sessions)
    except (ModelDirError, SuggestError, InputError, OutputError, OSError, ValueError) as error:
        return fail("evaluate", error, args.verbose)
    if args.prefix:
        return write_completions(report, args)
    _print_report(name, report, exported, args)
    return 0


def _check_files(args: argparse.Namespace) -> None:
    """Before any work (TensorFlow's import included): the logs are regular files, each given
    once, and no report goes over a file read, into a folder read (the model's, the data's)
    or where another report goes."""
    check_inputs(args.input or [], "--input")
    model = str(resolve(args.model)) if args.model == DEFAULT else args.model
    folders = [folder for folder in (model, args.data, args.train_data) if folder]
    reports: dict[str, str] = {}
    for flag in ("--json", "--markdown", "--chart"):
        if path := getattr(args, flag[2:]):
            check_output(path, flag, args.input or [], folders)
            if (other := reports.get(os.path.realpath(path))) is not None:
                raise OutputError(f"{flag} {path} is also {other}: give each report its file")
            reports[os.path.realpath(path)] = flag


def _parser() -> argparse.ArgumentParser:
    """The command's arguments (its --help)."""
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.evaluate", description=__doc__)
    add_model_option(parser)
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
    _add_report_arguments(parser)
    add_verbose(parser)
    return parser


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """--bootstrap, --history, --prefix and where the report goes."""
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
    parser.add_argument(
        "--typos",
        action="store_true",
        help="with --prefix: each case of 3 or more characters again with one seeded slip of "
        "the finger in what was typed (two letters swapped, one dropped, a neighbouring key, "
        "a letter doubled; never the first or the last typed), beside fuzzy MPC",
    )
    parser.add_argument(
        "--every",
        type=positive_int,
        default=1,
        metavar="N",
        help="with --prefix: score every Nth pair of each case only (default 1: all)",
    )
    parser.add_argument("--json", type=file_name, help="write the report as JSON here")
    parser.add_argument("--markdown", type=file_name, help="write the Table 2 style table here")
    parser.add_argument("--chart", type=file_name, help="write the BLEU bar chart (PNG) here")


class Pairs(NamedTuple):
    """The sessions scored, each line's user, and with --history each line's earlier
    queries (`earlier`) and the pairs' histories."""

    sessions: list[list[str]]
    users: list[str] | None
    earlier: PairHistories | None = None
    histories: list[list[str]] | None = None


def _pairs(args: argparse.Namespace, limits: Mapping[str, Any]) -> Pairs:
    """The sessions to score: a prepared split of --data, or the --input logs put through
    the protocol as `prepare` does, at the sizes the model reads (`limits`)."""
    if args.data:
        sessions = load_split(args.data, args.split)
        users = load_users(args.data, args.split)
        if not args.history:
            return Pairs(sessions, users)
        earlier = PairHistories.load(args.data, args.split)
        if earlier is None:
            raise ValueError(
                f"{args.data} keeps no users' histories: prepare it again for --history"
            )
        return Pairs(sessions, users, earlier, pair_histories(sessions, earlier))
    sizes = {name: limits[name] for name in ("max_queries", "max_query_tokens") if name in limits}
    protocol = Protocol.named(args.protocol, **sizes)
    view, by_user = replay_logs(args.input, args.format, protocol, history=args.history)
    if by_user is None:  # no --history
        return Pairs(view.lines, view.users)
    earlier = PairHistories(by_user, view.users, view.starts)
    return Pairs(view.lines, view.users, earlier, pair_histories(view.lines, earlier))


def _train_sessions(
    args: argparse.Namespace, trained: TrainedModel | None, sessions: list[list[str]]
) -> list[list[str]] | None:
    """The train split that fits adj (--train-data, --data or the model's own), with a
    warning when it overlaps the scored sessions or is not at hand."""
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
    return train_sessions


def _scored(args, trained, decoding, pairs, train_sessions):
    """(name, report): `complete` scored with --prefix (name None), else the SavedModel's or
    the run folder's suggestions; an export through the client (mtn_keras.load), and a run
    folder too with --prefix."""
    exported = trained is None
    model = load(args.model) if exported else None
    name = model_name(args.model) if exported else trained.name
    if args.prefix:
        return None, completions(
            model or run_folder(trained, decoding),
            name,
            pairs.sessions,
            train_sessions,
            pairs.users,
            args.prefix,
            decoding.k,
            pairs.earlier,
            batch_size=args.batch_size,
            resamples=args.bootstrap,
            typos=args.typos,
            every=args.every,
        )
    if exported:
        return name, evaluate_savedmodel(
            model,
            name,
            pairs.sessions,
            train_sessions,
            decoding.k,
            args.batch_size,
            pairs.users,
            args.bootstrap,
            pairs.histories,
        )
    return name, evaluate(
        trained,
        pairs.sessions,
        train_sessions,
        decoding,
        args.batch_size,
        pairs.users,
        args.bootstrap,
        pairs.histories,
    )


def _print_report(
    name: str, report: dict[str, Any], exported: bool, args: argparse.Namespace
) -> None:
    """Prints the tables and the pairs' line, and writes the report and chart."""
    rows = table_rows({name: report})
    table = markdown_table(rows) + "\n" + quality_table(rows)
    if split := history_table(rows):
        table += "\n" + split
    if lists := list_table({"": (rows, report.get("log_anchor"))}):
        table += "\n" + lists
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


def write_report(report: dict[str, Any], table: str, args: argparse.Namespace) -> None:
    """Prints the intervals' line and writes the report and its table where --json and
    --markdown say."""
    if note := bootstrap_line(report):
        print(note)
    if args.json:
        write_json(report, args.json)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(table + (f"\n{note}\n" if note else ""))


def write_completions(report: dict[str, Any], args: argparse.Namespace) -> int:
    """Prints the `--prefix` tables and writes them where --json and --markdown say."""
    from mtn_keras.scorecard.completion import completion_table
    from mtn_keras.scorecard.list_table import prefix_list_table

    table = completion_table(report)
    if lists := prefix_list_table(report):
        table += "\n" + lists
    print(table, end="")
    write_report(report, table, args)
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main, "evaluate"))
