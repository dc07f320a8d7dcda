"""The commands' error convention: bad input (a missing or corrupt file, an impossible option)
is one line on stderr, `PROG: what and where`, and exit code 2; the traceback is shown only
with --verbose. Anything else is a defect and keeps Python's own traceback."""

import sys
import traceback


def fail(prefix, error, verbose=False):
    """Prints `error` as the one line of the convention, `prefix: message` (after its
    traceback if verbose); returns the exit code 2."""
    if verbose:
        traceback.print_exception(error)
    print(f"{prefix}: {describe(error)}", file=sys.stderr)
    return 2


def describe(error):
    """An error as one line: an OSError as `FILE: reason`, anything else as its message."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 (byte {error.start})"
    return " ".join(str(error).split()) or type(error).__name__


def add_verbose(parser):
    """--verbose: show TensorFlow's log lines and the traceback of an error (for a bug report)."""
    parser.add_argument("--verbose", action="store_true",
                        help="show TensorFlow's start-up and log lines and the traceback of an error")


def needs_tensorflow(prog):
    """Exit code 2, with the convention's one line, when Keras runs on a backend other than
    TensorFlow: decoding, scoring and the SavedModel are TensorFlow graphs. None under it."""
    from mtn_keras.quiet import import_tensorflow

    import_tensorflow()  # before Keras, which imports it loudly
    import keras

    backend = keras.config.backend()
    if backend == "tensorflow":
        return None
    print(f"{prog}: needs the TensorFlow backend, and Keras runs on {backend}; run it with "
          "KERAS_BACKEND=tensorflow (only `train` and `data prepare` run under other backends)",
          file=sys.stderr)
    return 2
