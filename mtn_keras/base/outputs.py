"""Writing output directories and files so that a killed run never leaves half of one:
everything is written beside the target under a temporary name, then renamed into place.

Each temporary name `.KIND-PID-XXXX` has a lock file `.KIND-PID-XXXX.lock` beside it, held
(flock) by the writer while it works and naming the target: a later run removes the
leftovers of a writer whose lock is free (killed), and never those of a live one, even one
in another PID namespace on a shared file system. A kill between the two renames of a
replaced directory leaves the old copy in `.KIND-PID-XXXX.old`; it is put back, not deleted.
"""

import contextlib
import fcntl
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from typing import TextIO

_STAGING = re.compile(r"\.(?:prepare|export|write|ranking)-(\d+)-")
LOCK = ".lock"


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


def try_lock(path: str, note: str = "") -> TextIO | None:
    """An open file holding an exclusive flock on `path` (created if need be) with `note`
    written in it, or None when another process holds it. Closing the file releases it."""
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    if note:
        handle.truncate(0)
        handle.write(note)
        handle.flush()
    return handle


def lock_owner(path: str) -> str:
    """What the lock file `path` says of its holder (`pid N on host H`), or 'another process'."""
    with contextlib.suppress(OSError):
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = " ".join(handle.read().split())
        if text:
            return text
    return "another process"


def owner_note(what: str) -> str:
    """The note a lock file holds: `WHAT pid N on host H`."""
    return f"{what} pid {os.getpid()} on host {socket.gethostname()}\n"


def remove_stale_staging(parent: str) -> None:
    """Removes the temporary siblings in `parent` whose writer is gone (its lock is free);
    an old copy left between two renames goes back to its place if that place is empty."""
    try:
        names = [name for name in os.listdir(parent) if _STAGING.match(name)]
    except OSError:
        return
    stems = [name[: -len(LOCK)] for name in names if name.endswith(LOCK)]
    for stem in stems:
        _clean(parent, stem, [name for name in names if name.startswith(stem)])
    for name in names:
        # No lock file: left by an older version; its pid is all there is to go by.
        if not any(name.startswith(stem) for stem in stems) and not name.endswith(".old"):
            # (the ignore: every name in `names` matched _STAGING)
            if not _alive(int(_STAGING.match(name).group(1))):  # type: ignore[union-attr]
                _remove(os.path.join(parent, name))


def _clean(parent: str, stem: str, names: list[str]) -> None:
    """Cleans up the files `names` of the writer whose lock is `stem`.lock, if it is free."""
    lock_path = os.path.join(parent, stem + LOCK)
    handle = try_lock(lock_path)
    if handle is None:
        return
    with handle:
        handle.seek(0)
        target = handle.read().strip()
        temp, old = os.path.join(parent, stem), os.path.join(parent, stem + ".old")
        if os.path.exists(old) and target and not os.path.exists(target):
            # Killed between the renames: the new copy is whole if it is there, else the old.
            os.rename(temp if os.path.isdir(temp) else old, target)
        if os.path.exists(old) and not (target and os.path.exists(target)):
            return  # nowhere to put the only copy: kept
        for name in names:
            if name != stem + LOCK:
                _remove(os.path.join(parent, name))
        _remove(lock_path)


def _remove(path: str) -> None:
    """Removes a file or a directory tree, if it is there."""
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.remove(path)


@contextlib.contextmanager
def _staging_lock(parent: str, kind: str, target: str):
    """Yields a fresh temporary name in `parent` whose lock file (naming `target`) is held.
    An OSError about a temporary file (the lock, the staged copy or a file in it) names the
    person's `target` instead: they gave that path and never saw the other."""
    remove_stale_staging(parent)
    prefix = f".{kind}-{os.getpid()}-"
    try:
        handle, lock_path = tempfile.mkstemp(prefix=prefix, suffix=LOCK, dir=parent)
        os.close(handle)
        lock = try_lock(lock_path, os.path.abspath(target) + "\n")
        try:
            yield lock_path[: -len(LOCK)]
        finally:
            _remove(lock_path)
            lock.close()  # type: ignore[union-attr]  # a fresh file: no one else holds it
    except OSError as error:
        staged = os.path.join(parent, prefix)
        if not str(error.filename or "").startswith(staged):
            raise
        inside = os.path.relpath(error.filename, parent).split(os.sep)[1:]  # a file in it
        raise OSError(error.errno, error.strerror, os.path.join(target, *inside)) from None


# The outputs renamed into place by this process: what an interrupt after them leaves whole.
written: list[str] = []


@contextlib.contextmanager
def staged_directory(out: str, kind: str) -> Iterator[str]:
    """Yields a temporary sibling of `out` to fill; on success it replaces `out` (whose old
    content is removed only then), on failure it is removed and `out` is left as it was."""
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    with _staging_lock(parent, kind, out) as temp:
        os.mkdir(temp, 0o755)
        try:
            yield temp
            if os.path.exists(out):
                old = temp + ".old"
                os.rename(out, old)
                os.rename(temp, out)
                written.append(out)
                shutil.rmtree(old)
            else:
                os.rename(temp, out)
                written.append(out)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise


@contextlib.contextmanager
def staged_file(path: str) -> Iterator[str]:
    """Yields a temporary name beside `path` to write; on success it is renamed to `path`,
    readable by all as the other outputs are (0644 under the usual umask)."""
    parent = os.path.dirname(os.path.abspath(path))
    with _staging_lock(parent, "write", path) as stem:
        temp = stem + os.path.basename(path)
        try:
            yield temp
            os.chmod(temp, 0o666 & ~_umask())
            os.replace(temp, path)
            written.append(path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(temp)
            raise


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    """True if a process with this id runs (or cannot be signalled: another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
