"""Command line of the terminal app: `mtn-tui [--model PATH]`."""

import argparse
import os
from pathlib import Path

from mtn_keras.quiet import native_stderr_silenced

from .model import DEFAULT_MODEL
from .tui import MtnApp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="mtn-tui", description="Type a session of queries and watch next-query suggestions."
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help="a SavedModel directory, one containing savedmodel/, or `default`, the bundled "
        f"model (the default: {DEFAULT_MODEL})",
    )
    args = parser.parse_args(argv)
    # TensorFlow's native log lines would garble the screen: they go to a log file, where a
    # native abort also leaves its words. Inside: Textual takes sys.__stderr__ when the app
    # is made.
    with native_stderr_silenced(native_log_path()):
        MtnApp(args.model).run()


def native_log_path():
    """Where the app's native log lines go (~/.cache/mtn-keras/mtn-tui.log), or None
    (/dev/null) when that folder cannot be made."""
    folder = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mtn-keras"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder / "mtn-tui.log"


if __name__ == "__main__":
    main()
