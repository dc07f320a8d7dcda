"""Serving under load: the bundled SavedModel's `suggest` signature answering 1, 8 and 64
sessions at once (a server batches the sessions that arrive together into one call).

Why: issue 25, item 5: what one process serves, per call and per second, as load grows.

How: sessions of one to three made-up queries from examples/tiny-aol.txt (a user's queries
in order), right-aligned as the app and `suggest` send them; for each batch size the first
call (it compiles; kept in the XLA cache as the app's) is left out, then calls run for
--seconds, each on the next sessions. Printed per batch size: p50 and p99 of a call, and
sessions answered per second (sessions / the calls' total time).

Usage: python benchmarks/bench_serving.py [--model default] [--seconds 20] [--batches 1,8,64]
"""

import argparse
import csv
import itertools
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere: `mtn_keras` of this checkout

from mtn_keras.base.quiet import import_tensorflow  # noqa: E402
from mtn_keras.base.xla_setup import set_up_xla  # noqa: E402
from mtn_keras.serving.savedmodel import load, resolve  # noqa: E402

LOG = ROOT / "examples" / "tiny-aol.txt"


def made_up_sessions(path=LOG, longest=3):
    """Every user's queries in order, cut into sessions of one to `longest` queries, each
    right-aligned in `longest` slots ("" padding first)."""
    by_user = {}
    with open(path, encoding="utf-8", newline="") as rows:
        for row in csv.DictReader(rows, delimiter="\t"):
            by_user.setdefault(row["AnonID"], []).append(row["Query"])
    sessions = []
    for queries in by_user.values():
        for end in range(1, len(queries) + 1):
            kept = queries[max(0, end - longest) : end]
            sessions.append([""] * (longest - len(kept)) + kept)
    return sessions


def percentile(values, share):
    return sorted(values)[min(len(values) - 1, int(share * len(values)))]


def model_parser(doc, counts=None):
    """The command line of a bench of one SavedModel: `doc`'s first line, --model and, given
    `counts` (option, default, what they are), the option of the counts it runs at, whole
    numbers separated by commas (read with counts_of)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--model", default="default", help="a SavedModel (default: bundled)")
    if counts:
        option, default, what = counts
        parser.add_argument(option, default=default, help=f"{what}, comma-separated")
    return parser


def counts_of(parser, option, text):
    """The whole numbers in `text` ("1,8,64"), the value of `option`, else argparse's
    one-line error when one is not a whole number from 1."""
    try:
        counts = [int(count) for count in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        parser.error(f"{option} {text}: give whole numbers from 1, separated by commas")
    return counts


def main(argv=None):
    parser = model_parser(__doc__, ("--batches", "1,8,64", "batch sizes"))
    parser.add_argument("--seconds", type=float, default=20.0, help="timed per batch size")
    args = parser.parse_args(argv)
    batches = counts_of(parser, "--batches", args.batches)
    set_up_xla()
    tf = import_tensorflow()
    path = resolve(args.model)
    model, _ = load(path, ["suggest"])
    # The graph called directly, as a server's batcher calls it: this measures the signature
    # alone, without the client's checks and reading of the answer (the one raw call kept).
    suggest = model.signatures["suggest"]
    sessions = made_up_sessions()
    pool = itertools.cycle(sessions)
    print(f"model {path}; {len(sessions)} made-up sessions, cycled")
    for size in batches:

        def call():
            suggest(session=tf.constant([next(pool) for _ in range(size)]))["suggestions"].numpy()

        began = time.perf_counter()
        call()
        first = time.perf_counter() - began
        seconds = []
        until = time.perf_counter() + args.seconds
        while time.perf_counter() < until:
            began = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - began)
        p50, p99 = statistics.median(seconds), percentile(seconds, 0.99)
        print(
            f"batch {size:3d}: first call {first:.1f} s; {len(seconds)} calls, p50 "
            f"{1000 * p50:.0f} ms, p99 {1000 * p99:.0f} ms; "
            f"{size * len(seconds) / sum(seconds):.0f} sessions/s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
