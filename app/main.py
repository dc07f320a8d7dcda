"""Command line of the terminal app: `mtn-tui [--model PATH]`."""

import argparse

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
    # TensorFlow's native log lines would garble the screen. Inside: Textual takes
    # sys.__stderr__ when the app is made.
    with native_stderr_silenced():
        MtnApp(args.model).run()


if __name__ == "__main__":
    main()
