"""Query normalisation: lowercase, punctuation and symbols to spaces, spaces collapsed.

Each character is mapped on its own (a separator to a space, anything else to its lowercase),
so the serving graph can apply the same mapping from `character_tables` and agree with
`prepare` on every input (a NUL byte included).
"""

import functools
import string
import sys
import unicodedata

# ASCII punctuation and control characters become spaces. Nearly every logged query is
# ASCII, and bytes.translate is about three times faster than str.translate on it.
_SEPARATORS = (string.punctuation + "".join(map(chr, range(32))) + "\x7f").encode("ascii")
_ASCII_TABLE = bytes.maketrans(_SEPARATORS, b" " * len(_SEPARATORS))


def _is_separator(char: str) -> bool:
    """True for a character that separates words (punctuation, symbol, control, space)."""
    return unicodedata.category(char)[0] in "PSCZ"


def _form(char: str) -> str:
    """What one character becomes: a space if it separates words, else its lowercase."""
    return " " if _is_separator(char) else char.lower()


def normalise(query: str) -> str:
    """The query lowercased, punctuation to spaces, whitespace collapsed ("" if nothing is left)."""
    if query.isascii():
        return b" ".join(query.encode().translate(_ASCII_TABLE).lower().split()).decode()
    return " ".join("".join(map(_form, query)).split())


@functools.cache
def character_tables() -> tuple[list[int], dict[str, str]]:
    """The mapping of `normalise` as tables, for the serving graph: the separators as sorted
    code point bounds (a code point c separates words iff bisect_right(bounds, c) is odd),
    and the other characters whose lowercase differs, with that lowercase."""
    bounds, lower, inside = [], {}, False
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if _is_separator(char) != inside:
            bounds.append(code)
            inside = not inside
        if not inside and char.lower() != char:
            lower[char] = char.lower()
    return bounds, lower


# The characters of normalised text that a slip of the finger may add or put in another's
# place (the search graph's ranking/typos.py and the scorecard's slips alike).
SLIP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 "


def completes(query: str, prefix: str) -> bool:
    """Whether normalised `query` completes the typed `prefix` (normalised, spaces collapsed,
    a trailing space when its last word is finished): the finished words stand whole at its
    start and an unfinished last word begins one of its words ("hotel" gives "hotel deals"
    and "hotels"). The one rule of every completion outside the graph (serving/prefix.py is its
    form inside); a prefix with no words constrains nothing."""
    return not prefix.strip() or (query + " ").startswith(prefix)
