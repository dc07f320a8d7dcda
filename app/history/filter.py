"""Which typed queries the history never keeps: those typed with a leading space (as shells
skip them), those that look like secrets (secrets.py: a card number, a password after its
word, a key-like token...), those that seek sexual content involving minors (the project's
safety rule, mtn_keras.data.safety) and those matching the person's own patterns, one
regular expression a line in a config file (as atuin's history_filter). Dropped queries
still reach the session; they are only not written."""

from __future__ import annotations

import time
from pathlib import Path

import regex
from platformdirs import user_config_path

from mtn_keras.data.safety import child_unsafe
from mtn_keras.data.text import normalise

from .secrets import looks_secret


class IgnoreFileError(Exception):
    """An ignore file that cannot be used: `FILE:LINE: why`, in one line."""


def ignore_path() -> Path:
    """The person's ignore patterns (~/.config/mtn-keras/history-ignore on Linux)."""
    return user_config_path("mtn-keras") / "history-ignore"


# The time one query may spend in the person's patterns: a pattern that backtracks without
# end ("^(a+)+$") is stopped there, and the query is taken as matching it (not stored).
PATTERN_SECONDS = 0.05


def read_patterns(path: Path) -> list[regex.Pattern]:
    """The patterns of the ignore file at `path` (none if it does not exist): one regular
    expression a line (the `regex` package's syntax, Python's `re` and more), matched
    anywhere in a query, case ignored; blank lines and lines starting with # skipped. Raises
    IgnoreFileError naming the line of a bad one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise IgnoreFileError(f"{path}: cannot be read ({error})") from None
    patterns = []
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.lstrip().startswith("#"):
            try:
                patterns.append(regex.compile(line.strip(), regex.IGNORECASE))
            except regex.error as error:
                raise IgnoreFileError(f"{path}:{number}: not a regular expression ({error})")
    return patterns


class HistoryFilter:
    """What of a typed query is written: the query, ends stripped, or None when dropped."""

    def __init__(self, path: str | Path | None = None):
        self.path = ignore_path() if path is None else Path(path)
        self.patterns = read_patterns(self.path)

    def secret(self, query: str) -> bool:
        """Whether a stored `query` is one never to keep: it looks like a secret, matches an
        ignore pattern, or seeks sexual content involving minors (mtn_keras.data.safety)."""
        return looks_secret(query) or self.matches(query) or child_unsafe(normalise(query))

    def matches(self, query: str) -> bool:
        """Whether `query` matches one of the person's patterns, within PATTERN_SECONDS in
        all: one that cannot say in time counts as a match (better not kept than kept)."""
        deadline = time.monotonic() + PATTERN_SECONDS
        for pattern in self.patterns:
            left = deadline - time.monotonic()
            try:
                if left <= 0 or pattern.search(query, timeout=left):
                    return True
            except TimeoutError:
                return True
        return False

    def kept(self, typed: str) -> str | None:
        """`typed` as it is stored, or None: blank, typed with a leading space, or secret."""
        if not typed.strip() or typed[:1].isspace():
            return None
        query = typed.strip()
        return None if self.secret(query) else query
