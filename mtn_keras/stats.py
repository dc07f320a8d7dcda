"""Command line: `python -m mtn_keras.stats DIR`: prints the counts of a dataset directory that
`python -m mtn_keras.prepare` wrote (its stats.json), as prepare printed them."""

import argparse
import os
import sys

from mtn_keras.cli import add_verbose, fail, run
from mtn_keras.data.dataset_writer import format_stats
from mtn_keras.data.prepared import load_stats


def main(argv: list[str] | None = None) -> int:
    """Prints the prepared directory's counts; returns the exit code (2, with why on stderr,
    when it cannot)."""
    parser = argparse.ArgumentParser(
        prog="python -m mtn_keras.stats", description="Print a prepared directory's counts."
    )
    parser.add_argument("dir", metavar="DIR")
    add_verbose(parser)
    args = parser.parse_args(argv)
    path = os.path.join(args.dir, "stats.json")
    if not os.path.isfile(path):
        what = "has no stats.json" if os.path.isdir(args.dir) else "does not exist"
        print(
            f"error: {args.dir} {what}; run `python -m mtn_keras.prepare --input LOG "
            f"--out {args.dir}` first",
            file=sys.stderr,
        )
        return 2
    try:
        print(format_stats(load_stats(args.dir)))
    except (OSError, ValueError) as error:
        return fail("error", error, args.verbose)
    except (KeyError, TypeError, AttributeError) as error:
        return fail(
            "error", ValueError(f"{path}: not a whole stats.json ({error!r})"), args.verbose
        )
    return 0


if __name__ == "__main__":
    run(main, "stats")
