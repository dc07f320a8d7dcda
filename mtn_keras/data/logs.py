"""Readers for AOL and Excite query logs: rows streamed from plain or gzip files.

A malformed row (too few fields, no user, unparsable time, bytes that are not UTF-8) is
counted and the first few are reported as file:line; reading goes on. A file that cannot be
read at all (or is no regular file: mtn_keras.base.files.check_inputs) raises InputError.
"""

import gzip
import os
import zlib
from collections import Counter
from datetime import datetime, timedelta
from itertools import chain
from typing import Iterator, Sequence

from mtn_keras.base.files import InputError as InputError
from mtn_keras.base.files import check_inputs as check_inputs
from mtn_keras.data.progress import Progress

FORMATS = ("aol", "excite")
MAX_EXAMPLES = 5
_CHUNK = 1 << 20
_EPOCH = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)

# A row: (user, raw query, time in whole seconds since 1970 as logged, file, line number).
# Plain tuples: a NamedTuple costs more than the rest of reading a row.
Row = tuple[str, str, int, str, int]


class Tally:
    """Counts of what became of the rows read, with the first malformed rows as file:line,
    and the users read in order of first appearance (what a split by user shuffles)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.users: list[str] = []
        self.malformed_reasons: Counter[str] = Counter()
        self.malformed_examples: list[str] = []

    def malformed(self, file: str, line: int, reason: str) -> None:
        """Counts one malformed row, keeping `file:line: reason` for the first few."""
        self.counts["rows_malformed"] += 1
        self.malformed_reasons[reason] += 1
        if len(self.malformed_examples) < MAX_EXAMPLES:
            self.malformed_examples.append(f"{file}:{line}: {reason}")


def read_log(path: str, fmt: str, tally: Tally, progress: bool | None = None) -> Iterator[Row]:
    """Rows of one log of format `aol` or `excite`, in file order; Excite page-throughs skipped.

    AOL: `AnonID Query QueryTime [ItemRank ClickURL]`, an optional `AnonID` header line.
    Excite: `user yymmddHHMMSS query`, an empty query being a page-through (counted).
    `progress`: a bar on stderr (None: only when stderr is a terminal).
    """
    if fmt == "aol":
        user_at, query_at, time_at, splits, parse_time = 0, 1, 2, 3, _aol_time
    elif fmt == "excite":
        user_at, query_at, time_at, splits, parse_time = 0, 2, 1, 2, _excite_time
    else:
        raise ValueError(f"unknown log format {fmt!r}; expected one of {FORMATS}")
    need = max(user_at, query_at, time_at) + 1
    rows = page_throughs = 0
    last_time_text, last_time = None, 0
    lineno = 0
    try:
        for text in chain.from_iterable(_decoded_blocks(path, progress)):
            lineno += 1
            if lineno == 1 and fmt == "aol" and text is not None and text.startswith("AnonID\t"):
                tally.counts["header_lines"] += 1
                continue
            rows += 1
            if text is None:
                tally.malformed(path, lineno, "not UTF-8")
                continue
            fields = text.split("\t", splits)
            if len(fields) < need:
                tally.malformed(path, lineno, "too few fields" if text else "empty line")
                continue
            if not fields[user_at]:
                tally.malformed(path, lineno, "no user id")
                continue
            time_text = fields[time_at]
            if time_text != last_time_text:
                try:
                    last_time = parse_time(time_text)
                except (ValueError, TypeError, OverflowError):
                    tally.malformed(path, lineno, "unparsable time")
                    continue
                last_time_text = time_text
            query = fields[query_at]
            if fmt == "excite" and not query.strip():
                page_throughs += 1
                continue
            yield fields[user_at], query, last_time, path, lineno
    finally:
        tally.counts["rows_read"] += rows
        tally.counts["page_through"] += page_throughs


def read_clicks(path: str, fmt: str) -> Iterator[tuple[str, str]]:
    """(raw query, clicked address) of each row of an AOL log that carries a click, in file
    order; rows that `read_log` counts as malformed are skipped here (it reports them). An
    Excite log carries no clicks: nothing."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; expected one of {FORMATS}")
    if fmt != "aol":
        return
    for text in chain.from_iterable(_decoded_blocks(path, False)):
        fields = text.split("\t") if text else ()
        if len(fields) >= 5 and fields[0] and fields[4] and fields[0] != "AnonID":
            yield fields[1], fields[4]


def _decoded_blocks(path: str, progress: bool | None) -> Iterator[Sequence[str | None]]:
    """The file's lines in blocks, without line endings; None for a line that is not UTF-8."""
    for block in _blocks(path, progress):
        # A block ends where a line ended, so its last line may still hold the `\r` of a CRLF.
        try:
            lines = block.decode("utf-8").replace("\r\n", "\n").split("\n")
        except UnicodeDecodeError:
            yield [_decode_line(raw) for raw in block.split(b"\n")]
            continue
        lines[-1] = lines[-1].removesuffix("\r")
        yield lines


def _decode_line(raw: bytes) -> str | None:
    """One line decoded from UTF-8 without its `\\r`, or None if it is not UTF-8."""
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError:
        return None


MAX_LINE_BYTES = 1 << 20  # no log row is longer; reading stops there, memory stays bounded


def _blocks(path: str, progress: bool | None) -> Iterator[bytes]:
    """The file's bytes (gunzipped if gzip) in blocks of whole lines, last newline removed."""
    bar = Progress(os.path.basename(path), os.path.getsize(path), progress)
    try:
        with open(path, "rb") as raw:
            stream = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
            rest = b""
            while chunk := stream.read(_CHUNK):
                bar.update(raw.tell())
                chunk = rest + chunk
                cut = chunk.rfind(b"\n")
                if cut < 0:
                    if len(chunk) > MAX_LINE_BYTES:  # /dev/zero, a binary file: never a log
                        raise InputError(
                            f"{path}: a line longer than {MAX_LINE_BYTES:,} bytes, at byte "
                            f"{raw.tell():,}: not a log of queries"
                        )
                    rest = chunk
                    continue
                rest = chunk[cut + 1 :]
                yield chunk[:cut]
            if rest:
                yield rest
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"{path}: cannot read ({error})") from None
    bar.close()


def _aol_time(text: str) -> int:
    """Seconds since 1970 of an AOL time such as `2006-03-01 07:17:12`."""
    return (datetime.fromisoformat(text) - _EPOCH) // _SECOND


def _excite_time(text: str) -> int:
    """Seconds since 1970 of an Excite time `yymmddHHMMSS` (years 70..99 are 19xx)."""
    if len(text) != 12 or not text.isdigit():
        raise ValueError(text)
    year = int(text[:2])
    year += 1900 if year >= 70 else 2000
    month, day, hour, minute, second = (int(text[i : i + 2]) for i in range(2, 12, 2))
    return (datetime(year, month, day, hour, minute, second) - _EPOCH) // _SECOND
