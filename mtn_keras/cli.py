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
import math
import os
import sys
import traceback

from mtn_keras.base.config import FILTERS, UNRELATED_PLACES, DecodeConfig

NOTHING_TO_SHOW, BAD_INPUT = 1, 2


def fail(prefix, error, verbose=False):
    """Prints `error` as the one line of the convention, `prefix: message` (after its
    traceback if verbose); returns the exit code of bad input, 2."""
    if verbose:
        traceback.print_exception(error)
    print(f"{prefix}: {describe(error)}", file=sys.stderr)
    return BAD_INPUT


def run(main, prog):
    """Exits with `guarded(main, prog)`."""
    sys.exit(guarded(main, prog))


def guarded(main, prog):
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


def describe(error):
    """An error as one line: an OSError as `FILE: reason`, anything else as its message."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 (byte {error.start})"
    return " ".join(str(error).split()) or type(error).__name__


def add_verbose(parser):
    """--verbose: show TensorFlow's log lines and the traceback of an error (for a bug report)."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show TensorFlow's start-up and log lines and the traceback of an error",
    )


def add_decode_arguments(parser, fixed=False):
    """--k, --beam, --alpha, --repeat-last, --no-xla, --exact-stop, --source, --no-filter,
    --threshold, --unrelated-history, --unrelated-place, --popular and --explicit, defaulting
    to DecodeConfig's."""
    when = " (fixed at export)" if fixed else ""
    defaults = DecodeConfig()
    parser.add_argument(
        "--k", type=positive_int, default=defaults.k, help=f"number of suggestions{when}"
    )
    parser.add_argument(
        "--beam", type=positive_int, default=defaults.beam, help=f"beam width, at least k{when}"
    )
    parser.add_argument(
        "--alpha",
        type=non_negative_float,
        default=defaults.alpha,
        help="length normalisation ((5 + len) / 6) ** alpha (default: 1.0 for "
        f"ranked lists, 2.0 for the beam's alone){when}",
    )
    parser.add_argument(
        "--repeat-last",
        action="store_true",
        help=f"allow the last query itself as a suggestion{when}",
    )
    parser.add_argument(
        "--no-xla",
        dest="xla",
        action="store_false",
        help=f"run the search without XLA compilation{when}",
    )
    parser.add_argument(
        "--exact-stop",
        action="store_true",
        help=f"search on while an alive beam could still win at any length{when}",
    )
    parser.add_argument(
        "--source",
        choices=["hybrid", "beam"],
        default=defaults.source,
        help="hybrid: the beam's and the query log's candidates ranked together "
        f"(when the model has a ranking); beam: the beam's alone{when}",
    )
    parser.add_argument(
        "--no-filter",
        action="append",
        default=[],
        choices=FILTERS,
        help=f"switch a filter off (repeatable){when}",
    )
    parser.add_argument(
        "--threshold",
        type=probability,
        default=None,
        help="the ranker's probability a suggestion needs to be shown "
        f"(default: the ranking's tuned value; 0 shows k){when}",
    )
    parser.add_argument(
        "--unrelated-history",
        type=non_negative_int,
        default=defaults.unrelated_history,
        help="with a history, nothing typed: at most this many of the user's earlier queries "
        f"that relate to nothing in the session (default {defaults.unrelated_history}){when}",
    )
    parser.add_argument(
        "--unrelated-place",
        choices=UNRELATED_PLACES,
        default=defaults.unrelated_place,
        help="where they stand: ranked (where the ranker puts them, never first; the default) "
        f"or last (after every related suggestion, the session's own two best kept){when}",
    )

    parser.add_argument(
        "--popular",
        type=non_negative_int,
        default=defaults.popular,
        help="nothing typed: at most this many of the log's most frequent next queries, "
        f"chosen by their share of them, after the ranked ones (default {defaults.popular}){when}",
    )
    parser.add_argument(
        "--explicit",
        action="store_true",
        help="show sexually explicit suggestions too (hidden by default; a query seeking "
        f"sexual content involving minors is never shown){when}",
    )


def decode_config(args):
    """The DecodeConfig of arguments parsed with `add_decode_arguments`."""
    filters = tuple(f for f in FILTERS if f not in args.no_filter)
    return DecodeConfig(
        k=args.k,
        beam=args.beam,
        alpha=args.alpha,
        repeat_last=args.repeat_last,
        xla=args.xla,
        exact_stop=args.exact_stop,
        source=args.source,
        filters=filters,
        threshold=args.threshold,
        unrelated_history=args.unrelated_history,
        unrelated_place=args.unrelated_place,
        popular=args.popular,
        explicit=args.explicit,
    )


def file_name(text):
    """A file or folder name, for argparse: an empty one is refused (given, it is no name, and
    taken as "not given" it would do something else)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name is no file: give one")
    return text


def positive_int(text):
    """An integer of at least 1, for argparse."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def non_negative_int(text):
    """An integer of at least 0, for argparse."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def non_negative_float(text):
    """A finite number of at least 0 (not nan), for argparse."""
    value = float(text)
    if not 0 <= value < math.inf:
        raise ValueError(text)
    return value


def probability(text):
    """A number in [0, 1] (not nan), for argparse."""
    value = float(text)
    if not 0 <= value <= 1:
        raise ValueError(text)
    return value


def needs_tensorflow(prog, verbose=False):
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
# The options a SavedModel cannot take: its decoding was fixed at export.
FIXED = {
    "beam": "--beam",
    "alpha": "--alpha",
    "repeat_last": "--repeat-last",
    "xla": "--no-xla",
    "exact_stop": "--exact-stop",
    "source": "--source",
    "filters": "--no-filter",
    "threshold": "--threshold",
    "unrelated_history": "--unrelated-history",
    "unrelated_place": "--unrelated-place",
    "popular": "--popular",
    "explicit": "--explicit",
}


def unfit_option(decoding, settings):
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
