"""Command line: `python -m mtn_keras.prepare --input LOG --out DIR`; `python -m
mtn_keras.stats DIR` prints its counts again."""

import argparse
import math
import sys
from typing import Any

from mtn_keras.cli import add_verbose, fail, file_name, run
from mtn_keras.data.dataset_writer import PrepareError, format_stats, prepare
from mtn_keras.data.logs import FORMATS, InputError
from mtn_keras.data.replay import Counting, count_logs
from mtn_keras.data.sessions import PROTOCOLS, SESSION_GAP_SECONDS, Protocol


def _split(text: str) -> tuple[float, float, float]:
    """Parses `--split 95/2.5/2.5` (relative train/valid/test shares)."""
    try:
        shares = tuple(float(part) for part in text.split("/"))
    except ValueError:
        shares = ()
    if (
        len(shares) != 3
        or not all(math.isfinite(share) for share in shares)
        or min(shares) < 0
        or shares[0] <= 0
    ):
        raise argparse.ArgumentTypeError(f"expected shares such as 95/2.5/2.5, not {text!r}")
    return shares


def _split_users(text: str) -> tuple[int, int]:
    """Parses `--split-users 90,90` (validation and test users)."""
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        counts = ()
    if len(counts) != 2 or min(counts) < 0:
        raise argparse.ArgumentTypeError(f"expected two user counts such as 90,90, not {text!r}")
    return counts


LOG_HELP = "log files, plain or .gz"
OUT_HELP = "the prepared dataset directory to write"
# The sessions' sizes and the vocabulary's least count, whole numbers: (option, default, help).
COUNTS = (
    ("--min-queries", None, "shortest session kept (default: 3 for paper, 2 for all)"),
    ("--max-queries", 5, "paper: longest session kept; all: longest window (default: 5)"),
    (
        "--max-query-tokens",
        10,
        "paper: sessions with a longer query are dropped; all: longer "
        "queries are truncated (default: 10)",
    ),
    ("--min-count", 3, "vocabulary: least count of a word in training (default: 3)"),
)


def _parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m mtn_keras.prepare`."""
    parser = argparse.ArgumentParser(
        prog="python -m mtn_keras.prepare",
        description="Normalise queries, sessionize per user (rows out of time order are sorted), "
        "drop consecutive duplicates, filter sessions, split them (seeded), build the vocabulary "
        "from the training split, write DIR (see docs/contracts.md).",
    )
    parser.add_argument(
        "--input", type=file_name, nargs="+", required=True, metavar="LOG", help=LOG_HELP
    )
    parser.add_argument("--out", type=file_name, required=True, metavar="DIR", help=OUT_HELP)
    _add_session_arguments(parser)
    _add_writing_arguments(parser)
    add_verbose(parser)
    return parser


def _add_session_arguments(p: argparse.ArgumentParser) -> None:
    """prepare's log format, session protocol and sizes, and the vocabulary's least count."""
    p.add_argument("--format", choices=FORMATS, default="aol", help="log format (default: aol)")
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="paper",
        help="paper: sessions of 3..5 queries of <= 10 tokens; all: every session "
        "of 2+ queries, long ones cut into windows, long queries truncated "
        "(default: paper)",
    )
    p.add_argument(
        "--gap-minutes",
        type=float,
        metavar="MIN",
        default=SESSION_GAP_SECONDS // 60,
        help="new session after more than this idle time (default: %(default)s)",
    )
    for option, default, text in COUNTS:
        p.add_argument(option, type=int, metavar="N", default=default, help=text)


def _add_writing_arguments(p: argparse.ArgumentParser) -> None:
    """prepare's vocabulary, split and overwriting."""
    p.add_argument(
        "--subwords",
        type=int,
        metavar="SIZE",
        default=0,
        help="a WordPiece vocabulary of about SIZE pieces instead of words, so that "
        "unseen words are spelt from pieces (default: 0, words)",
    )
    p.add_argument(
        "--split",
        type=_split,
        metavar="TRAIN/VALID/TEST",
        help="split shares (default: 95/2.5/2.5)",
    )
    p.add_argument(
        "--split-users",
        type=_split_users,
        metavar="VALID,TEST",
        help="with --split-by user, instead of --split: this many users with sessions in "
        "the validation and the test split, every other user in train",
    )
    p.add_argument(
        "--split-by",
        choices=("session", "user"),
        default="session",
        help="split sessions at random, or users (default: session)",
    )
    p.add_argument(
        "--seed", type=int, metavar="N", default=0, help="seed of the split (default: 0)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a prepared dataset in --out (nothing else is ever deleted)",
    )


def main(
    argv: list[str] | None = None,
    count: Counting = count_logs,
) -> int:
    """Runs `python -m mtn_keras.prepare`; returns the exit code (2 for bad input, with one
    line on stderr). `count`: where the counting stages run (mtn_keras.cluster: on Spark)."""
    parser = _parser()
    args = parser.parse_args(argv)
    protocol = _protocol(parser, args)
    split = args.split or (95, 2.5, 2.5)
    try:
        stats = prepare(
            args.input,
            args.out,
            args.format,
            protocol,
            args.min_count,
            split,
            args.split_by,
            args.seed,
            args.force,
            subwords=args.subwords,
            split_users=args.split_users,
            count=count,
        )
    except (InputError, PrepareError, OSError) as error:
        return fail("error", error, args.verbose)
    print(format_stats(stats))
    print(f"\nwrote {args.out}")
    _warn_empty(stats, args, split)
    return 0


def _protocol(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Protocol:
    """The session protocol that prepare's options ask; exits through `parser.error` on
    options that do not fit together."""
    try:
        fields = dict(
            gap_minutes=args.gap_minutes,
            max_queries=args.max_queries,
            max_query_tokens=args.max_query_tokens,
        )
        if args.min_queries is not None:
            fields["min_queries"] = args.min_queries
        protocol = Protocol.named(args.protocol, **fields)
    except ValueError as error:
        parser.error(str(error))
    if args.min_count < 1:
        parser.error("--min-count must be at least 1")
    if args.subwords and args.subwords < 50:
        parser.error("--subwords must be 0 (words) or at least 50 pieces")
    if args.split_users and args.split_by != "user":
        parser.error("--split-users needs --split-by user")
    if args.split_users and args.split:
        parser.error("--split-users replaces --split; give one of them")
    return protocol


def _warn_empty(
    stats: dict[str, Any], args: argparse.Namespace, split: tuple[float, float, float]
) -> None:
    """A warning on stderr for each empty split, naming the split option given."""
    asked = (
        f"--split-users {','.join(map(str, args.split_users))}"
        if args.split_users
        else f"--split {'/'.join(f'{share:g}' for share in split)}"
    )
    for name, counts in stats["splits"].items():
        if not counts["sessions"]:
            print(
                f"warning: {args.out}: the {name} split is empty ({asked}); train needs "
                "sessions in train and valid",
                file=sys.stderr,
            )


if __name__ == "__main__":
    run(main, "prepare")
