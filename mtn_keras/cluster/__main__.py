"""Command line: `python -m mtn_keras.cluster --input LOG --out DIR [--index INDEX] [--master
URL]` and any other option of `prepare`: prepare's dataset, and with --index rank's
query-log index of its training split, counted on Spark (docs/engine.md)."""

import argparse
import os
from functools import partial

from mtn_keras.cli import fail, file_name, run
from mtn_keras.cluster.index_counts import index_on
from mtn_keras.cluster.log_counts import count_logs_on
from mtn_keras.cluster.spark_context import NoEngine, spark_context
from mtn_keras.data.evidence import Evidence
from mtn_keras.data.prepared import load_split, load_users
from mtn_keras.prepare import main as prepare_main
from mtn_keras.ranking.blocklist import blocked_phrases
from mtn_keras.ranking.log_index import FILES as INDEX_FILES


def _parser() -> argparse.ArgumentParser:
    """The engine's own options; every other one goes to prepare's parser."""
    parser = argparse.ArgumentParser(
        prog="python -m mtn_keras.cluster",
        description="prepare's counting stages, and with --index those of rank's query-log "
        "index, on Spark: the same files as `python -m mtn_keras.prepare` and `rank`'s index.",
        epilog="Every other option is prepare's: python -m mtn_keras.prepare --help.",
    )
    parser.add_argument(
        "--out", type=file_name, required=True, metavar="DIR", help="the dataset to write"
    )
    parser.add_argument(
        "--index",
        type=file_name,
        metavar="INDEX",
        help="also write the query-log index of the training split (rank's index files)",
    )
    parser.add_argument(
        "--master",
        metavar="URL",
        help="Spark's master: local[2], spark://HOST:7077, yarn, k8s://... "
        "(default: spark-submit's, else local[*])",
    )
    parser.add_argument("--force", action="store_true", help="replace DIR and INDEX")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs `python -m mtn_keras.cluster`; returns the exit code (2 for bad input)."""
    args, rest = _parser().parse_known_args(argv)
    rest += ["--out", args.out] + (["--force"] if args.force else [])
    try:
        if args.index:
            _check_index_out(args.index, args.force)
        with spark_context(args.master) as sc:
            code = prepare_main(rest, count=partial(count_logs_on, sc))
            if code or not args.index:
                return code
            index = index_on(
                sc,
                load_split(args.out, "train"),
                load_users(args.out, "train") or [],
                blocked_phrases(),
                Evidence.load(args.out),
            )
    except (NoEngine, ValueError, OSError) as error:
        return fail("error", error)
    index.save(args.index)
    print(f"index: {index.sizes()}\nwrote {args.index}")
    return 0


def _check_index_out(path: str, force: bool) -> None:
    """Raises ValueError when INDEX holds files, unless --force and they are an index's."""
    held = set(os.listdir(path)) if os.path.isdir(path) else set()
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"--index {path} is a file; give a folder")
    if held and not (force and held <= set(INDEX_FILES)):
        raise ValueError(f"--index {path} holds files; --force replaces only an index")


if __name__ == "__main__":
    run(main, "cluster")
