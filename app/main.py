"""Command line of the terminal app: `mtn-tui [--model PATH]`."""

import argparse
import os
import sys
from contextlib import contextmanager

from app.model import DEFAULT_MODEL
from app.tui import MtnApp


@contextmanager
def native_stderr_silenced():
    """Send what native code writes to file descriptor 2 (TensorFlow's C++ logs) to /dev/null.

    Those lines would garble the screen; Python's sys.stderr, on which Textual draws and
    tracebacks are printed, is moved to a copy of the terminal's descriptor meanwhile.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    terminal = os.fdopen(os.dup(2), "w", encoding=sys.stderr.encoding, errors="replace")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    streams = sys.stderr, sys.__stderr__
    sys.stderr = sys.__stderr__ = terminal
    try:
        yield
    finally:
        terminal.flush()
        sys.stderr, sys.__stderr__ = streams
        os.dup2(saved, 2)
        os.close(saved)
        terminal.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="mtn-tui", description="Type a session of queries and watch next-query suggestions."
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help=f"a SavedModel directory, or one containing savedmodel/ (default: {DEFAULT_MODEL})",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with native_stderr_silenced():  # inside: Textual takes sys.__stderr__ when the app is made
        MtnApp(args.model).run()


if __name__ == "__main__":
    main()
