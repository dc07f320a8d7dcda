"""Native log lines away from the terminal (base/quiet.py), from any thread at once."""

import os
import sys
import threading

from mtn_keras.base.quiet import native_stderr_silenced


def test_native_lines_go_to_the_log_file_and_python_errors_still_show(tmp_path, capfd):
    """The app's whole life runs inside this: a native abort must leave its words."""
    log = tmp_path / "native.log"
    with native_stderr_silenced(log):
        os.write(2, b"F0000 a native check failed\n")
        print("a Python traceback line", file=sys.stderr)
    assert "a native check failed" in log.read_text()
    assert "a Python traceback line" in capfd.readouterr().err
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_blocks_in_several_threads_share_one_redirection_put_back_by_the_last(tmp_path, capfd):
    """As the app: its whole run silenced in the main thread, TensorFlow imported in a worker
    that may still be inside when the main block ends."""
    log = tmp_path / "native.log"
    stderr, inside, leave = sys.stderr, threading.Event(), threading.Event()

    def worker():
        with native_stderr_silenced():
            inside.set()
            leave.wait(10)
            os.write(2, b"from the worker, after the main block\n")

    thread = threading.Thread(target=worker)
    with native_stderr_silenced(log):
        thread.start()
        inside.wait(10)
        os.write(2, b"from the main thread\n")
    assert sys.stderr is not stderr  # the worker is still inside: not put back yet
    leave.set()
    thread.join(10)
    assert sys.stderr is stderr
    assert log.read_text() == "from the main thread\nfrom the worker, after the main block\n"
    os.write(2, b"on the terminal again\n")
    assert "on the terminal again" in capfd.readouterr().err


def test_many_threads_at_once_leave_stderr_as_it_was(capfd):
    stderr = sys.stderr

    def enter_and_leave():
        for _ in range(50):
            with native_stderr_silenced():
                os.write(2, b"native noise\n")

    threads = [threading.Thread(target=enter_and_leave) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sys.stderr is stderr
    os.write(2, b"still the terminal\n")
    err = capfd.readouterr().err
    assert "still the terminal" in err and "native noise" not in err
