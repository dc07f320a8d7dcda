"""What the commands share: their exit codes, their error line, and the parsing of the
options several of them take.

Exit codes, one convention for every command:
- 0: done;
- 1: done, but there is nothing to show (`suggest` when no suggestion passes);
- 2: bad input (a missing or corrupt file, an impossible option, an output path that cannot
  be written), reported as one line on stderr, `PROG: what and where`, before any work; the
  traceback only with --verbose. argparse's own usage errors exit 2 too.
Anything else is a defect and keeps Python's own traceback (exit 1).
"""

import argparse
import dataclasses
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn

from mtn_keras.base.config import DecodeConfig

NOTHING_TO_SHOW, BAD_INPUT = 1, 2


def fail(prefix: str, error: BaseException, verbose: bool = False) -> int:
    """Prints `error` as the one line of the convention, `prefix: message` (after its
    traceback if verbose); returns the exit code of bad input, 2."""
    if verbose:
        traceback.print_exception(error)
    print(f"{prefix}: {describe(error)}", file=sys.stderr)
    return BAD_INPUT


def run(main: Callable[[], int | None], prog: str) -> NoReturn:
    """Exits with `guarded(main, prog)`."""
    sys.exit(guarded(main, prog))


def guarded(main: Callable[[], int | None], prog: str) -> int | None:
    """`main()`'s exit code; Ctrl-C is one line and 130 (staged outputs are removed on the
    way; those already in place are named, whole), and a closed pipe on stdout (`| head -1`)
    ends quietly with 141."""
    from mtn_keras.base.outputs import written

    written.clear()  # those of this run only
    try:
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:
        if written:
            done = ", ".join(written)
            print(f"{prog}: interrupted after {done} was written whole", file=sys.stderr)
        else:
            print(f"{prog}: interrupted; no half-written output is left", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        code = 141
    return code


def describe(error: BaseException) -> str:
    """An error as one line: an OSError as `FILE: reason`, anything else as its message."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 (byte {error.start})"
    return " ".join(str(error).split()) or type(error).__name__


def add_verbose(parser: argparse.ArgumentParser) -> None:
    """--verbose: show TensorFlow's log lines and the traceback of an error (for a bug report)."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show TensorFlow's start-up and log lines and the traceback of an error",
    )


def add_decode_arguments(parser: argparse.ArgumentParser, fixed: bool = False) -> None:
    """One option per DecodeConfig field (--k, --beam, ... --explicit), as the field's metadata
    writes it, defaulting to the field's default; `fixed`: say that an export fixes it."""
    when = " (fixed at export)" if fixed else ""
    for field in dataclasses.fields(DecodeConfig):
        option = field.metadata
        keywords = {"default": field.default, **option["argparse"]}
        help = option["help"].format(default=field.default) + when
        parser.add_argument(option["flag"], dest=field.name, help=help, **keywords)


def decode_config(args: argparse.Namespace) -> DecodeConfig:
    """The DecodeConfig of arguments parsed with `add_decode_arguments`."""
    values = {}
    for field in dataclasses.fields(DecodeConfig):
        read = field.metadata["read"]
        value = getattr(args, field.name)
        values[field.name] = read(value) if read else value
    return DecodeConfig(**values)


def file_name(text: str) -> str:
    """A file or folder name, for argparse: an empty one is refused (given, it is no name, and
    taken as "not given" it would do something else)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name is no file: give one")
    return text


def add_queries_file(
    parser: argparse.ArgumentParser, option: str, metavar: str, text: str, user_text: str
) -> None:
    """`option`, a file of a searcher's queries that may be an AOL-format log, and --user ID,
    the log's user whose queries are read (`mtn-tui --import-history`, `suggest --history`)."""
    parser.add_argument(option, metavar=metavar, type=file_name, help=text)
    parser.add_argument("--user", metavar="ID", help=user_text)


def needs_tensorflow(prog: str, verbose: bool = False) -> int | None:
    """Exit code 2, with the convention's one line, when Keras runs on a backend other than
    TensorFlow: decoding, scoring and the SavedModel are TensorFlow graphs. None under it.
    TensorFlow's own log lines show only when `verbose`."""
    from mtn_keras.base.quiet import import_tensorflow, show_tensorflow_logs

    show_tensorflow_logs(verbose)
    import_tensorflow()  # before Keras, which imports it loudly
    import keras

    backend = keras.config.backend()
    if backend == "tensorflow":
        return None
    print(
        f"{prog}: needs the TensorFlow backend, and Keras runs on {backend}; run it with "
        "KERAS_BACKEND=tensorflow (only `train` and `prepare` run under other backends)",
        file=sys.stderr,
    )
    return BAD_INPUT


MODEL_HELP = (
    "a run folder written by mtn_keras.train, an exported SavedModel (or a folder "
    "holding one in savedmodel/), or `default`, the bundled model, as mtn-tui takes"
)
TRAINED_HELP = "a directory written by mtn_keras.train"


def add_model_option(
    parser: argparse.ArgumentParser, text: str = MODEL_HELP, required: bool = True, **more: str
) -> None:
    """--model, the model a command reads (a file or folder name, checked by `file_name`)."""
    parser.add_argument("--model", type=file_name, required=required, help=text, **more)


# The options a SavedModel cannot take: its decoding was fixed at export (a smaller --k cuts
# its lists).
FIXED = {
    field.name: field.metadata["flag"]
    for field in dataclasses.fields(DecodeConfig)
    if field.name != "k"
}


def unfit_option(decoding: DecodeConfig, settings: dict) -> str | None:
    """Why a SavedModel exported with `settings` (its export.json) cannot decode as `decoding`
    asks, in one line; None when it can. Options left at their defaults are not checked; a
    --k given may be smaller than the export's (the list is cut), not larger."""
    defaults = DecodeConfig()
    for name, option in FIXED.items():
        given, exported = getattr(decoding, name), settings.get(name)
        if name == "filters" and exported is not None:
            exported = tuple(exported)
        if given == getattr(defaults, name) or (name in settings and given == exported):
            continue
        value = "" if isinstance(given, (bool, tuple)) else f" {given}"
        shown = "its own default" if exported is None else exported
        fixed = f" ({name}: {shown})" if name in settings else ""
        return (
            f"{option}{value} cannot apply to a SavedModel: its decoding was fixed at "
            f"export{fixed}; export again with it, or give the run folder of train"
        )
    if decoding.k != defaults.k and decoding.k > settings.get("k", decoding.k):
        return (
            f"--k {decoding.k} is more than the {settings['k']} suggestions the SavedModel "
            f"was exported with; export again with --k {decoding.k}, or give the run folder"
        )
    return None
