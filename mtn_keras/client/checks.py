"""What the client reads from a runner, checked before use: texts that are strings
(TensorFlow's bytes or a server's JSON strings) holding nothing a terminal would act on,
tables of numbers of the shape asked, finite where they must be. A server can answer
anything; what it answers wrong is one ValueError that names the output and the place
(`scores[0][2] is NaN, not a finite number`). `printable` writes a server's words for a
message."""

import json
from collections.abc import Sequence

import numpy as np


def printable(text: str, limit: int = 300) -> str:
    """The first `limit` characters of `text` with every one a terminal would act on (ESC,
    other controls, line breaks, bidi overrides) written as a Python escape: a server's or
    a caller's words, safe to print in a message."""
    text = text[:limit]
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def json_echoed(value: object) -> str:
    """`value` as a server wrote it in JSON (null, true, 5, "text"), cut for a message."""
    try:
        said = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        said = repr(value)
    return printable(said, 60)


def text(value: object, where: str) -> str:
    """`value` as a string, from bytes (TensorFlow) or a string (a server). A model's texts
    are normalised: one that is not UTF-8, or holds a control character, is no answer."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{where} is not UTF-8 text") from None
    if not isinstance(value, str):
        raise ValueError(f"{where} is {json_echoed(value)}, not a string")
    if not value.isprintable():
        raise ValueError(f"{where} holds a control character: {printable(value, 60)}")
    return value


def texts(value: object, name: str, shape: Sequence[int | None]) -> list:
    """`value` as nested lists of strings (each read by `text`), `len(shape)` deep, each list
    as long as `shape` says at its depth (None: as long as the first one met there)."""
    lengths = list(shape)

    def read(item, where, depth):
        if depth == len(lengths):
            return text(item, where)
        rows(item, where, lengths[depth])
        lengths[depth] = len(item)
        return [read(inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(item)]

    return read(value, name, 0)


def rows(value: object, name: str, count: int | None) -> list | tuple | np.ndarray:
    """`value` if it is a list (or an array) of `count` entries (None: any number)."""
    if not isinstance(value, (list, tuple, np.ndarray)) or getattr(value, "ndim", 1) == 0:
        raise ValueError(f"{name} is {json_echoed(value)}, not a list")
    if count is not None and len(value) != count:
        raise ValueError(f"{name} holds {len(value)} entries, not {count}")
    return value


KINDS = {"b": "true or false", "U": "text", "S": "text", "O": "null, text or lists"}


def numbers(value: object, name: str, shape: Sequence[int | None]) -> np.ndarray:
    """`value` as a float32 array of `shape` (None: any length on that axis); every entry a
    number (not text, a bool or null). Not checked to be finite: see `finite`."""
    try:
        array = np.asarray(value)
    except ValueError:  # lists of unequal lengths
        raise ValueError(f"{name} is not a table of numbers: its lists differ in length") from None
    if array.dtype.kind not in "fiu":
        what = KINDS.get(array.dtype.kind, array.dtype.name)
        raise ValueError(f"{name} holds {what}, not only numbers")
    if array.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(array.shape, shape)
    ):
        wanted = ", ".join("any" if want is None else str(want) for want in shape)
        raise ValueError(f"{name} has the shape {list(array.shape)}, not [{wanted}]")
    with np.errstate(over="ignore"):  # past float32's range: infinite, as `finite` says
        return array.astype(np.float32)


def finite(array: np.ndarray, name: str, used: np.ndarray | bool = True) -> np.ndarray:
    """`array` if every entry is a finite number where `used` (a mask that broadcasts to it:
    the padding's may be anything, an empty slot's score -inf)."""
    bad = ~np.isfinite(array) & used
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        place = "".join(f"[{i}]" for i in at)
        said = json.dumps(float(array[at]))
        raise ValueError(f"{name}{place} is {said}, not a finite number")
    return array
