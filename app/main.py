"""Command line of the terminal app: `mtn-tui [--model PATH] [--history PATH | --no-history]`,
and the history's file work, done without opening the interface: `--import-history LOG --user
ID`, `--export-history FILE`."""

import argparse
import os
import sys
from pathlib import Path

from mtn_keras.data.logs import InputError
from mtn_keras.quiet import native_stderr_silenced

from .history_files import export_tsv, import_log
from .history_store import default_path, open_store
from .model import DEFAULT_MODEL
from .tui import MtnApp


def parser() -> argparse.ArgumentParser:
    """The options of `mtn-tui`."""
    parser = argparse.ArgumentParser(
        prog="mtn-tui", description="Type a session of queries and watch next-query suggestions."
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help="a SavedModel directory, one containing savedmodel/, or `default`, the bundled "
        f"model (the default: {DEFAULT_MODEL})",
    )
    parser.add_argument(
        "--history",
        metavar="PATH",
        help=f"the history store to use (the default: {default_path()})",
    )
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="keep no history: the store is neither read nor written",
    )
    parser.add_argument(
        "--import-history",
        metavar="LOG",
        help="add the queries of one user (--user) of an AOL-format log to the store, and exit",
    )
    parser.add_argument("--user", metavar="ID", help="the AnonID to import (--import-history)")
    parser.add_argument(
        "--export-history",
        metavar="FILE",
        help="write the store's queries to FILE, one a line: query TAB time (UTC); and exit",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    args_parser = parser()
    args = args_parser.parse_args(argv)
    if args.import_history or args.export_history:
        if args.import_history and not args.user:
            args_parser.error("--import-history needs --user ID")
        sys.exit(history_files(args))
    # TensorFlow's native log lines would garble the screen: they go to a log file, where a
    # native abort also leaves its words. Inside: Textual takes sys.__stderr__ when the app
    # is made.
    app = MtnApp(args.model, history_path=args.history, use_history=not args.no_history)
    with native_stderr_silenced(native_log_path()):
        app.run()
    if app.store is not None and app.store.pending:  # the store stayed locked to the end
        print(
            f"mtn-tui: {app.store.path} stayed locked: {len(app.store.pending)} queries of this "
            "run could not be written.",
            file=sys.stderr,
        )


def history_files(args: argparse.Namespace) -> int:
    """Import into and/or export from the store, saying what was done; the exit status."""
    store, notes = open_store(args.history)
    for note in notes:
        print(note, file=sys.stderr)
    if store is None:
        return 1
    try:
        if args.import_history:
            added = import_log(store, args.import_history, args.user)
            print(f"Imported {added} queries of user {args.user} into {store.path}.")
        if args.export_history:
            written = export_tsv(store, args.export_history)
            print(f"Exported {written} queries to {args.export_history}.")
    except (InputError, OSError) as error:
        print(f"mtn-tui: {error}", file=sys.stderr)
        return 1
    finally:
        all_written = store.close()
    if not all_written:
        print(
            f"mtn-tui: {store.path} stayed locked: {len(store.pending)} queries not written.",
            file=sys.stderr,
        )
        return 1
    return 0


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
