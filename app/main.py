"""Command line of the terminal app: `mtn-tui [--model PATH | --server URL] [--history PATH |
--no-history]`, and the history's file work, done without opening the interface:
`--import-history LOG --user ID`, `--export-history FILE`."""

import argparse
import os
import sys
from pathlib import Path

from mtn_keras.base.quiet import native_stderr_silenced
from mtn_keras.base.xla_setup import cache_home, set_up_xla, skip_graph_rewrites
from mtn_keras.cli import BAD_INPUT, add_model_option, add_queries_file, describe, file_name
from mtn_keras.client.remote import is_url, redacted
from mtn_keras.data.logs import InputError

from .history.files import (
    RECOVERY_USER,
    export_refusal,
    export_tsv,
    import_queries,
    purge_secrets,
    read_history_file,
    save_unwritten,
)
from .history.filter import HistoryFilter, IgnoreFileError, ignore_path
from .history.opening import default_path, open_store
from .history.store import HistoryStore, StoreError
from .model import DEFAULT_MODEL
from .tui import MtnApp

SERVER_VARIABLE = "MTN_TUI_SERVER"  # the --server to use when none is given


def parser() -> argparse.ArgumentParser:
    """The options of `mtn-tui`."""
    parser = argparse.ArgumentParser(
        prog="mtn-tui", description="Type a session of queries and watch next-query suggestions."
    )
    add_model_options(parser)
    add_history_options(parser)
    return parser


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose the model and what it may show and be sent."""
    add_model_option(
        parser,
        "a SavedModel directory, one containing savedmodel/, or `default`, the bundled "
        f"model (the default: {DEFAULT_MODEL})",
        required=False,
        metavar="PATH",
    )
    parser.add_argument(
        "--server",
        metavar="URL",
        default=os.environ.get(SERVER_VARIABLE) or None,
        help="call a running server instead, http://HOST:PORT/v1/models/NAME "
        "(python -m mtn_keras.serve or TensorFlow Serving): no TensorFlow in the app, ready "
        f"at once (the default: ${SERVER_VARIABLE}, when set)",
    )
    parser.add_argument(
        "--send-history",
        action="store_true",
        help="send your history to a --server on another machine too (by default only a "
        "server on this machine gets it)",
    )
    parser.add_argument(
        "--explicit",
        action="store_true",
        help="show sexually explicit suggestions where the model gives them (hidden by "
        "default; a query seeking sexual content involving minors is never shown)",
    )


def add_history_options(parser: argparse.ArgumentParser) -> None:
    """The options of the history store, and its file work done without the interface."""
    parser.add_argument(
        "--history",
        metavar="PATH",
        type=file_name,
        help=f"the history store to use (the default: {default_path()})",
    )
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="keep no history: the store is neither read nor written",
    )
    add_queries_file(
        parser,
        "--import-history",
        "LOG",
        "add the queries of one user (--user) of an AOL-format log, or those of a file "
        "written by --export-history, to the store, and exit",
        "the AnonID to import (--import-history)",
    )
    parser.add_argument(
        "--export-history",
        metavar="FILE",
        type=file_name,
        help="write the store's queries to FILE (0600; - for standard output), one a line: "
        "query TAB time (UTC); and exit",
    )
    parser.add_argument(
        "--purge-secrets",
        action="store_true",
        help="delete the stored queries that look like secrets or match a pattern of "
        f"{ignore_path()}, and exit",
    )
    parser.add_argument(
        "--force", action="store_true", help="let --export-history replace an existing FILE"
    )


def main(argv: list[str] | None = None) -> None:
    args_parser = parser()
    args = args_parser.parse_args(argv)
    if args.import_history is not None or args.export_history is not None or args.purge_secrets:
        if args.no_history:
            args_parser.error("--no-history opens no store to import into, export from or purge")
        try:
            sys.exit(history_files(args))
        except KeyboardInterrupt:  # an import is one transaction; an export's part is removed
            print("mtn-tui: interrupted; nothing half-written is left", file=sys.stderr)
            sys.exit(130)
    if args.server and args.model:
        args_parser.error("give --model or --server, not both")
    if args.server and not is_url(args.server):
        args_parser.error(f"--server {redacted(args.server)}: give http://HOST:PORT/v1/models/NAME")
    set_up_xla()  # process-wide, before TensorFlow is imported: compilations kept on disk
    # TensorFlow's native log lines would garble the screen: they go to a log file, where a
    # native abort also leaves its words. Inside: Textual takes sys.__stderr__ when the app
    # is made.
    app = MtnApp(
        args.server or args.model,
        history_path=args.history,
        use_history=not args.no_history,
        prepare_tensorflow=skip_graph_rewrites,  # graphs run as exported: a faster start
        send_history=args.send_history,
        explicit=args.explicit,
    )
    with native_stderr_silenced(native_log_path()):
        app.run()
    if app.store is not None and app.store.pending:  # the store stayed locked to the end
        sys.exit(report_unwritten(app.store))


def report_unwritten(store: HistoryStore) -> int:
    """Save the queries of this run that `store` could not take to a recovery file, and say
    in one line where and how to add them back (or that they could not be saved); the exit
    status, 1: the run did not keep everything it should have."""
    count = len(store.pending)
    try:
        saved = save_unwritten(store)
    except OSError as error:
        print(
            f"mtn-tui: {store.path}: {store.failure}: {count} queries of this run could not be "
            f"written, nor saved beside it ({describe(error)}).",
            file=sys.stderr,
        )
        return 1
    print(
        f"mtn-tui: {store.path}: {store.failure}: {count} queries of this run saved in {saved} "
        f"instead; add them with: mtn-tui --history {store.path} --import-history {saved} "
        f"--user {RECOVERY_USER}",
        file=sys.stderr,
    )
    return 1


def history_files(args: argparse.Namespace) -> int:
    """Import into and/or export from the store, saying what was done; the exit status: 2 for
    bad input (checked before the store is opened, so that a failed import creates nothing),
    1 for a store that cannot be used or could not take every query."""
    try:
        history_filter = HistoryFilter()
        if args.export_history is not None:
            store_path = Path(args.history) if args.history else default_path()
            refusal = export_refusal(
                args.export_history, store_path, args.import_history, args.force
            )
            if refusal:
                raise InputError(refusal)
        timed = read_history_file(args.import_history, args.user) if args.import_history else []
        timed = [(query, when) for query, when in timed if history_filter.kept(query)]
    except (InputError, IgnoreFileError) as error:
        print(f"mtn-tui: {error}", file=sys.stderr)
        return BAD_INPUT
    store, notes = open_store(args.history)
    for note in notes:
        print(note, file=sys.stderr)
    if store is None:
        return 1
    try:
        if args.import_history:
            added = import_queries(store, timed)
            if not store.flush(wait=True):
                raise StoreError(
                    f"{store.path}: {store.failure}: {len(store.pending)} queries not written"
                )
            whose = f" of user {args.user}" if args.user else ""
            print(f"Imported {added} queries{whose} into {store.path}.")
        if args.purge_secrets:
            purged, scrubbed = purge_secrets(store, history_filter)
            print(f"Purged {purged} queries that look like secrets from {store.path}.")
            if not scrubbed:
                print(
                    f"mtn-tui: another program holds {store.path} open: the deleted text "
                    "stays in that file until the program closes it.",
                    file=sys.stderr,
                )
        if args.export_history:
            written = export_tsv(store, args.export_history)
            to_stdout = args.export_history == "-"  # then the count goes to stderr
            where = "standard output" if to_stdout else args.export_history
            print(f"Exported {written} queries to {where}.", file=sys.stderr if to_stdout else None)
    except (StoreError, OSError) as error:
        print(f"mtn-tui: {describe(error)}", file=sys.stderr)
        return 1
    finally:
        store.pending.clear()  # said above: nothing to keep trying at close
        store.close()
    return 0


def native_log_path():
    """Where the app's native log lines go (~/.cache/mtn-keras/mtn-tui.log), or None
    (/dev/null) when that folder cannot be made."""
    folder = cache_home()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder / "mtn-tui.log"


if __name__ == "__main__":
    main()
