"""Peak memory of `train`'s training batches held in memory against streamed from disk
(`--stream-input`), on a prepared training split repeated N times, for growing N.

Why: the whole AOL collection is about 99 times the dev log; `train` must read its training
split without holding it in memory. In memory, `train` holds the split's sessions as Python
lists and all their encoded arrays; streamed, the arrays are written once to .npy files
beside the split (a chunk of sessions at a time) and memory-mapped.

How: per N, a folder holding the split N times over (written line by line, beside the
dataset's vocab.txt and stats.json) and, each in a fresh process (the peak of a process never
goes down): `memory`, the split read and its batches built as `train` does without
streaming, then one epoch read; `build`, the streamed folder built anew (the old one of the
same key removed first); `read`, the built folder opened and one epoch read. Printed per N:
each process's peak RSS (ru_maxrss) and seconds, the anonymous memory at the end of `read`
(RssAnon: what the kernel cannot drop; the rest of its RSS is the mapped files' pages, page
cache it may reclaim), and the ratio of the in-memory peak to the larger streamed one. The
copies repeat the same sessions: the arrays' sizes are those of N times the split, whatever
the words.

Usage: python benchmarks/bench_streamed_input.py --data /tmp/g4 [--copies 1,4,16]
       [--preset small] [--work DIR] [--skip-memory-past N]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from mtn_keras.base.config import configure
from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.prepared import load_split, load_stats
from mtn_keras.data.streamed_buckets import cache_folder
from mtn_keras.data.vocab import Vocabulary

MODES = ("memory", "build", "read")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def anonymous_mb() -> float:
    """This process's RssAnon now, from /proc (0 where there is none)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def child(mode: str, folder: str, preset: str) -> dict:
    """One measured process's work on the split in `folder`: its figures."""
    vocab = Vocabulary.load(os.path.join(folder, "vocab.txt"))
    model_config, train_config = configure(preset, load_stats(folder), len(vocab))
    n, batch_size = model_config.max_query_tokens, train_config.batch_size
    path = os.path.join(folder, "train.tsv")
    started = time.perf_counter()
    if mode == "memory":
        sessions = load_split(folder, "train")  # held for the run, as `train` holds it
        batches = SessionBatches(sessions, vocab, n, batch_size, shuffle=True, seed=0)
    else:
        if mode == "build":
            shutil.rmtree(cache_folder(path, vocab, n), ignore_errors=True)
        batches = SessionBatches(path, vocab, n, batch_size, shuffle=True, seed=0, stream=True)
    if mode != "build":
        rows = sum(len(y) for _, y in batches)
        assert rows == sum(len(bucket["target"]) for bucket in batches.buckets)
    return {
        "sessions": batches.sessions,
        "peak_mb": peak_mb(),
        "anonymous_mb": anonymous_mb(),
        "seconds": time.perf_counter() - started,
    }


def measure(mode: str, folder: str, preset: str) -> dict:
    """`child`'s figures from a fresh process."""
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", mode, folder, "--preset", preset],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_streamed_input: {mode} on {folder} failed: {done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def repeated(data: str, copies: int, work: str) -> str:
    """A folder of `data`'s vocab.txt and stats.json and its train.tsv `copies` times over."""
    folder = os.path.join(work, f"x{copies}")
    os.makedirs(folder, exist_ok=True)
    for name in ("vocab.txt", "stats.json"):
        shutil.copyfile(os.path.join(data, name), os.path.join(folder, name))
    with open(os.path.join(folder, "train.tsv"), "wb") as out:
        for _ in range(copies):
            with open(os.path.join(data, "train.tsv"), "rb") as split:
                shutil.copyfileobj(split, out)
    return folder


def counts(text: str) -> list[int]:
    values = [int(part) for part in text.split(",")]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"whole numbers of 1 or more, not {text!r}")
    return values


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="a prepared dataset folder (its train.tsv is repeated)")
    parser.add_argument("--copies", type=counts, default=[1, 4, 16], help="e.g. 1,4,16")
    parser.add_argument("--preset", default="small", help="gives max_tokens and the batch size")
    parser.add_argument("--work", help="where the repeated splits go (default: a temporary one)")
    parser.add_argument(
        "--skip-memory-past", type=int, help="no in-memory process past this many copies"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.child and not args.data:
        parser.error("--data is required")
    return args


HEADER = (
    "| copies | sessions | train.tsv MB | in memory: peak MB, s | streamed, build: peak MB, s "
    "| streamed, an epoch: peak MB (anonymous), s | in memory / streamed peak |\n"
    "|---|---|---|---|---|---|---|"
)


def row(copies: int, size_mb: float, found: dict) -> str:
    """The table's row of one number of copies."""
    memory, build, read = (found.get(mode) for mode in MODES)
    streamed = max(build["peak_mb"], read["peak_mb"])
    cells = [
        str(copies),
        f"{read['sessions']:,}",
        f"{size_mb:.1f}",
        f"{memory['peak_mb']:,.0f}, {memory['seconds']:.0f}" if memory else "not run",
        f"{build['peak_mb']:,.0f}, {build['seconds']:.0f}",
        f"{read['peak_mb']:,.0f} ({read['anonymous_mb']:,.0f}), {read['seconds']:.0f}",
        f"{memory['peak_mb'] / streamed:.1f}" if memory else "-",
    ]
    return "| " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.preset)))
        return 0
    work = args.work or tempfile.mkdtemp(prefix="bench-streamed-")
    print(f"{args.data}/train.tsv repeated, the {args.preset} preset's width and batch size")
    print(HEADER, flush=True)
    try:
        for copies in args.copies:
            folder = repeated(args.data, copies, work)
            size_mb = os.path.getsize(os.path.join(folder, "train.tsv")) / 2**20
            skip = args.skip_memory_past is not None and copies > args.skip_memory_past
            found = {mode: measure(mode, folder, args.preset) for mode in MODES[skip:]}
            print(row(copies, size_mb, found), flush=True)
            shutil.rmtree(folder)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
