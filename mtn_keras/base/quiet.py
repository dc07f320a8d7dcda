"""TensorFlow imported without its start-up log lines, for every command and the app.

TensorFlow's C++ side writes a banner, CUDA probes and XLA notices straight to file
descriptor 2, some of them before any log level is read; only `--verbose` shows them.
"""

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

_lock = threading.Lock()  # guards the two below: the app imports TensorFlow in a worker thread
_users = 0  # the blocks inside native_stderr_silenced now, in any thread
_restore = None  # puts fd 2 and sys.stderr back: set by the first block in, run by the last out
_show_logs = False  # a command's --verbose


@contextmanager
def native_stderr_silenced(log_path: str | os.PathLike | None = None) -> Iterator[None]:
    """Send what native code writes to file descriptor 2 to `log_path` (appended; for a
    long-lived program such as the app, so that a native abort leaves its words there) or
    else to /dev/null (TensorFlow's import), meanwhile.

    Python's sys.stderr (tracebacks, Textual's screen) moves to a copy of the real
    descriptor meanwhile, so Python-level output still shows. Thread-safe: the first block
    in (of any thread) redirects, the others use its redirection, the last one out puts
    everything back.
    """
    global _users, _restore
    with _lock:
        if _users == 0:
            _restore = _redirect(log_path)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                _restore()  # type: ignore[misc]  # set by the first block in, never None here
                _restore = None


def _redirect(log_path):
    """Point fd 2 at `log_path` (or /dev/null) and sys.stderr at a copy of the real fd 2; the
    function that puts both back."""
    sys.stderr.flush()
    saved = os.dup(2)
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    terminal = os.fdopen(os.dup(2), "w", encoding=encoding, errors="replace")
    if log_path is None:
        target = os.open(os.devnull, os.O_WRONLY)
    else:
        target = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(target, 2)
    os.close(target)
    streams = sys.stderr, sys.__stderr__
    sys.stderr = sys.__stderr__ = terminal  # type: ignore[misc]  # typeshed: Final; it moves

    def restore() -> None:
        terminal.flush()
        sys.stderr, sys.__stderr__ = streams  # type: ignore[misc]  # put back, as above
        os.dup2(saved, 2)
        os.close(saved)
        terminal.close()

    return restore


def show_tensorflow_logs(show: bool) -> None:
    """Whether TensorFlow's log lines show (a command's --verbose); say it before the import."""
    global _show_logs
    _show_logs = show


def import_tensorflow(verbose: bool | None = None) -> ModuleType:
    """TensorFlow, imported silently unless `verbose` (default: as show_tensorflow_logs said);
    its later log lines below errors are off too."""
    if verbose is None:
        verbose = _show_logs
    if verbose or "tensorflow" in sys.modules:
        import tensorflow as tf

        return tf
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with native_stderr_silenced():
        import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    return tf
