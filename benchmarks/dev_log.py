"""The AOL dev log that the benchmarks run on (../shared/data beside the repository), and
their common start: the command line, or a message when the log is absent."""

import argparse
from pathlib import Path

LOG = Path(__file__).resolve().parents[1].parent / "shared/data/aol/aol-top1000-dev.txt.gz"


def arguments_or_skip(description, option, default):
    """The command line (one integer `option`, e.g. "--repeat"), or None, with a message,
    when the dev log is absent: a benchmark then skips."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(option, type=int, default=default)
    args = parser.parse_args()
    if not LOG.exists():
        print(f"skipped: {LOG} is absent")
        return None
    return args
