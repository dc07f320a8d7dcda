"""Query normalisation: lowercase, punctuation and symbols to spaces, spaces collapsed."""

import string
import unicodedata

# ASCII punctuation and control characters become spaces. Nearly every logged query is
# ASCII, and bytes.translate is about three times faster than str.translate on it.
_SEPARATORS = (string.punctuation + "".join(map(chr, range(32))) + "\x7f").encode("ascii")
_ASCII_TABLE = bytes.maketrans(_SEPARATORS, b" " * len(_SEPARATORS))


def _is_separator(char: str) -> bool:
    """True for a non-ASCII character that separates words (punctuation, symbol, control)."""
    return unicodedata.category(char)[0] in "PSCZ"


def normalise(query: str) -> str:
    """The query lowercased, punctuation to spaces, whitespace collapsed ("" if nothing is left)."""
    if query.isascii():
        return b" ".join(query.encode().translate(_ASCII_TABLE).lower().split()).decode()
    return " ".join("".join(" " if _is_separator(c) else c for c in query.lower()).split())
