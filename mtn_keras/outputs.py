"""Writing output directories and files so that a killed run never leaves half of one:
everything is written beside the target under a temporary name, then renamed into place.
The temporary name carries the writer's process id, so a later run removes what a killed
one left behind."""

import contextlib
import os
import re
import shutil
import tempfile

_STAGING = re.compile(r"\.(?:prepare|export|write)-(\d+)-")


class OutputError(Exception):
    """An output path that cannot be written as asked; says which and why."""


def check_out_path(out: str, flag: str = "--out") -> None:
    """Raises OutputError if `out` is a file, or lies under a file (`small.txt/sub`)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"{flag} {out} exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(out))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise OutputError(f"{flag} {out}: {parent} is a file, not a directory")


def check_writable(path: str, flag: str) -> None:
    """Raises OutputError unless the file `path` can be written (checked before a long run)."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputError(f"{flag} {path} is a directory, not a file")
    if not os.path.isdir(parent):
        raise OutputError(f"{flag} {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise OutputError(f"{flag} {path}: not writable")


def remove_stale_staging(parent: str) -> None:
    """Removes the temporary siblings in `parent` whose writing process is gone (killed)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            match = _STAGING.match(name)
            if match and not _alive(int(match.group(1))):
                path = os.path.join(parent, name)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.remove(path)


@contextlib.contextmanager
def staged_directory(out: str, kind: str):
    """Yields a temporary sibling of `out` to fill; on success it replaces `out` (whose old
    content is removed only then), on failure it is removed and `out` is left as it was."""
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    remove_stale_staging(parent)
    temp = tempfile.mkdtemp(prefix=f".{kind}-{os.getpid()}-", dir=parent)
    try:
        os.chmod(temp, 0o755)  # mkdtemp's 0o700 would stay on the final directory
        yield temp
        if os.path.exists(out):
            old = temp + ".old"
            os.rename(out, old)
            os.rename(temp, out)
            shutil.rmtree(old)
        else:
            os.rename(temp, out)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


@contextlib.contextmanager
def staged_file(path: str):
    """Yields a temporary name beside `path` to write; on success it is renamed to `path`."""
    parent = os.path.dirname(os.path.abspath(path))
    remove_stale_staging(parent)
    handle, temp = tempfile.mkstemp(prefix=f".write-{os.getpid()}-", suffix=os.path.basename(path), dir=parent)
    os.close(handle)
    try:
        yield temp
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise


def _alive(pid: int) -> bool:
    """True if a process with this id runs (or cannot be signalled: another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
