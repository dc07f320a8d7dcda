"""The query log's own misspellings, read as slips: "bank of amercia" is indexed,
offered and generated as "bank of america".

A word of the log is a slip when it is rare in English (and in the log's other languages),
one typing edit from a word far more frequent in English and in the log, and either the
corrected word stands beside the same neighbours elsewhere in the log or the log types the
correction far more often. English frequencies come from wordfreq, read only when the
index is built (`rank`); the export carries the table, so serving needs no new package.
"""

from collections import Counter
from collections.abc import Iterable, Mapping

MIN_CHARS = 5  # shorter words are too often acronyms or call signs ("wkar", "hvlp")
RARE = 2.0  # zipf: a slip is rarer than this in English and in OTHER_LANGUAGES
COMMON = 3.0  # zipf: its correction is at least this frequent in English
GAP = 2.0  # zipf: and this much more frequent than the slip
LOG_RATIO = 10  # the log types the correction at least this many times as often
STRONG_RATIO = 30  # ... and this many times, when the neighbours do not vouch for it
OTHER_LANGUAGES = ("es", "fr", "de", "it", "pt")  # "poemas" and "eventos" are no slips
KEYBOARD = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEYS = {k: (row, i + 0.5 * row) for row, keys in enumerate(KEYBOARD) for i, k in enumerate(keys)}


def neighbours_on_keyboard(a: str, b: str) -> bool:
    """Whether two letters touch on a QWERTY keyboard (a slip replaces a letter by one)."""
    (row_a, col_a), (row_b, col_b) = _KEYS[a], _KEYS[b]
    return abs(row_a - row_b) <= 1 and abs(col_a - col_b) <= 1


def typing_edits(word: str) -> set[str]:
    """The words one typing edit from `word`, its first and last letters kept: a letter
    dropped, inserted, swapped with the next, or replaced by a keyboard neighbour."""
    found = set()
    for i in range(1, len(word)):
        head, tail = word[:i], word[i:]
        if len(tail) > 1:
            found.add(head + tail[1:])
            found.update(head + c + tail[1:] for c in _KEYS if neighbours_on_keyboard(tail[0], c))
        if len(tail) > 2:
            found.add(head + tail[1] + tail[0] + tail[2:])
        found.update(head + c + tail for c in _KEYS)
    found.discard(word)
    return found


def log_slips(queries: Iterable[str]) -> dict[str, str]:
    """{slip: correction} for the words of `queries` (normalised strings, one per occurrence
    in the log). The steps are public so that an engine can run them on a log in parts
    (mtn_keras.cluster): count, find the corrections, check the neighbours, keep."""
    queries = list(queries)
    words, pairs = word_counts(queries)
    slips = {word: fix for word, n in words.items() if (fix := correction(word, n, words))}
    return kept_slips(slips, words, neighbour_checks(slips, queries, pairs))


def word_counts(queries: Iterable[str]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """How often each word of `queries` occurs, and each two words side by side."""
    words: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for query in queries:
        split = query.split()
        words.update(split)
        pairs.update(zip(split, split[1:]))
    return words, pairs


def _rare(word: str) -> bool:
    from wordfreq import zipf_frequency

    return all(zipf_frequency(word, lang) < RARE for lang in ("en", *OTHER_LANGUAGES))


def correction(word: str, count: int, words: Mapping[str, int]) -> str | None:
    """The correction of `word`, typed `count` times, if it may be a slip: rare in English,
    one typing edit from a word far more frequent in English and in the log (`words`, the
    log's word counts); else None."""
    from wordfreq import zipf_frequency

    if len(word) < MIN_CHARS or not (word.isascii() and word.isalpha()) or not _rare(word):
        return None
    fixes = [
        (zipf_frequency(fix, "en"), fix)
        for fix in typing_edits(word)
        if words.get(fix, 0) >= LOG_RATIO * count
    ]
    floor = max(COMMON, zipf_frequency(word, "en") + GAP)
    fixes = [(z, fix) for z, fix in fixes if z >= floor]
    return max(fixes)[1] if fixes else None


def neighbour_checks(
    slips: Mapping[str, str], queries: Iterable[str], pairs: Mapping[tuple[str, str], int]
) -> dict[str, list[bool]]:
    """{slip: for each neighbour of each of its occurrences in `queries`, whether its
    correction stands beside that neighbour somewhere in the log (`pairs`)}."""
    seen: dict[str, list[bool]] = {word: [] for word in slips}
    for query in queries:
        split = query.split()
        for i, word in enumerate(split):
            fix = slips.get(word)
            if fix is None:
                continue
            if i:
                seen[word].append(pairs.get((split[i - 1], fix), 0) > 0)
            if i + 1 < len(split):
                seen[word].append(pairs.get((fix, split[i + 1]), 0) > 0)
    return seen


def kept_slips(
    slips: Mapping[str, str], words: Mapping[str, int], checks: Mapping[str, list[bool]]
) -> dict[str, str]:
    """The slips whose correction the log types STRONG_RATIO times as often, or whose
    neighbours vouch for it (at least half of its `checks`; a slip with none is vouched
    for)."""
    return {
        word: fix
        for word, fix in slips.items()
        if words.get(fix, 0) >= STRONG_RATIO * words.get(word, 0)
        or 2 * sum(checks[word]) >= len(checks[word])
    }


def corrected(query: str, slips: Mapping[str, str]) -> str:
    """`query` with each slip replaced by its correction."""
    return " ".join(slips.get(word, word) for word in query.split())
