"""The files a command reads and writes, checked before any work: an input is a regular file
(a FIFO waits for a writer, a device never ends) given once, and an output is never a file
the command reads nor inside a folder it reads. And a line reader with bounds, so that what
a file holds never takes more than its bounds of memory or time."""

import gzip
import os
import stat
import zlib
from collections.abc import Iterable, Iterator

from mtn_keras.base.outputs import OutputError, check_writable


class InputError(Exception):
    """An input that cannot be read as asked: missing, not a regular file, given twice,
    unreadable, or not in its format."""


def check_inputs(paths: Iterable[str], flag: str = "--input") -> None:
    """Raises InputError for the first path that is not a readable regular file, or that names
    a file given before, under the same name or another (it would be read twice)."""
    seen: list[tuple[str, os.stat_result]] = []
    for path in paths:
        found = _regular(path)
        for earlier, known in seen:
            if os.path.samestat(found, known):
                again = "twice" if earlier == path else f"twice, as {earlier} and {path}"
                raise InputError(f"{path}: the same file given {again} to {flag}: give it once")
        seen.append((path, found))


def _regular(path: str) -> os.stat_result:
    """The status of the regular file at `path`; InputError for anything else."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror})") from None
    if stat.S_ISDIR(found.st_mode):
        raise InputError(f"{path}: is a directory, not a log file")
    if not stat.S_ISREG(found.st_mode):
        raise InputError(
            f"{path}: is {_kind(found.st_mode)}, not a regular file: give a file (reading it "
            "could wait for a writer or never end)"
        )
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror})") from None
    return found


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, in a few words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "a special file"


def check_output(
    path: str, flag: str, inputs: Iterable[str] = (), folders: Iterable[str] = ()
) -> None:
    """Raises OutputError unless a new file can go to `path`: in a folder that is written, not
    a FIFO, device or directory, not one of the `inputs` (under any name) and not inside one
    of the `folders` the command reads (a model, a dataset)."""
    check_writable(path, flag)
    if os.path.exists(path):
        if not os.path.isfile(path):
            raise OutputError(f"{flag} {path} is not a regular file: give a file to write")
        for name in inputs:
            if os.path.exists(name) and os.path.samefile(path, name):
                raise OutputError(f"{flag} {path} is the input {name}: write it elsewhere")
    target = os.path.realpath(path)
    for folder in folders:
        real = os.path.realpath(folder)
        if os.path.commonpath([real, target]) == real:
            raise OutputError(f"{flag} {path} lies inside {folder}, which is read: write elsewhere")


def bounded_lines(path: str, max_line: int, max_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each line of the file at `path` (gunzipped if gzip), its line break
    removed. InputError names the first line longer than `max_line` bytes, or says that the
    file holds more than `max_bytes`: the caller's format never comes near either."""
    total = number = 0
    try:
        with open(path, "rb") as raw:
            stream = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
            while line := stream.readline(max_line + 3):  # room for the line break
                number, total = number + 1, total + len(line)
                if total > max_bytes:
                    raise InputError(f"{path}: more than {max_bytes:,} bytes: too large to read")
                line = line.removesuffix(b"\n").removesuffix(b"\r")
                if len(line) > max_line:
                    raise InputError(f"{path}:{number}: a line longer than {max_line:,} bytes")
                yield number, line
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"{path}: cannot read ({error})") from None
