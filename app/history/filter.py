"""Which typed queries the history never keeps: those typed with a leading space (as shells
skip them), those that look like secrets (a card number by Luhn, a social security number, a
long key-like token, a word like password followed by a value), those that seek sexual
content involving minors (the project's safety rule, mtn_keras.data.safety) and those
matching the person's own patterns, one regular expression a line in a config file (as
atuin's history_filter). Dropped queries still reach the session; they are only not written."""

from __future__ import annotations

import re
from pathlib import Path

from platformdirs import user_config_path

from mtn_keras.data.safety import child_unsafe
from mtn_keras.data.text import normalise

# A value after these is a secret: "password hunter2", "pwd: x" (not "password reset").
PASSWORD_WORDS = r"password|passwd|pwd|passcode|passphrase|pass word"
# After these, a value with a digit is: "ssn 078-05-1120", "pin 4821", "api key a1b2".
VALUE_WORDS = r"pin|ssn|cvv|cvc|secret|token|api ?key|access ?key|account|acct|routing"
COMMON_AFTER = set(
    "reset recovery recover forgot forgotten change changer manager managers generator "
    "requirements help protect protected protection strength checker hint hints expired "
    "policy security safe keeper vault app apps cracker crack hack list ideas tips examples "
    "for of to on in and with is was not at by from the a my".split()
)
PASSWORD = re.compile(rf"\b(?:{PASSWORD_WORDS})\b\s*[:=]?\s*(\S+)", re.IGNORECASE)
VALUE = re.compile(rf"\b(?:{VALUE_WORDS})\b\s*[:=#]?\s*(\S*\d\S*)", re.IGNORECASE)
SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
KEY_LIKE = re.compile(r"[A-Za-z0-9_\-+/=]{20,}")


class IgnoreFileError(Exception):
    """An ignore file that cannot be used: `FILE:LINE: why`, in one line."""


def ignore_path() -> Path:
    """The person's ignore patterns (~/.config/mtn-keras/history-ignore on Linux)."""
    return user_config_path("mtn-keras") / "history-ignore"


def luhn(digits: str) -> bool:
    """Whether `digits` passes the Luhn check of card numbers."""
    total = 0
    for i, digit in enumerate(int(d) for d in reversed(digits)):
        total += digit if i % 2 == 0 else (digit * 2 - 9 if digit > 4 else digit * 2)
    return total % 10 == 0


def looks_secret(query: str) -> bool:
    """Whether `query` looks like it holds a secret (see the module's docstring)."""
    found = PASSWORD.search(query)
    if found and found.group(1).lower().strip(":=") not in COMMON_AFTER:
        return True
    if VALUE.search(query) or SSN.search(query):
        return True
    for run in CARD.finditer(query):
        digits = re.sub(r"\D", "", run.group())
        if 13 <= len(digits) <= 19 and luhn(digits):
            return True
    return any(
        re.search(r"\d", token) and re.search(r"[A-Za-z]", token)
        for token in KEY_LIKE.findall(query)
    )


def read_patterns(path: Path) -> list[re.Pattern]:
    """The patterns of the ignore file at `path` (none if it does not exist): one regular
    expression a line, matched anywhere in a query, case ignored; blank lines and lines
    starting with # skipped. Raises IgnoreFileError naming the line of a bad one."""
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
                patterns.append(re.compile(line.strip(), re.IGNORECASE))
            except re.error as error:
                raise IgnoreFileError(f"{path}:{number}: not a regular expression ({error})")
    return patterns


class HistoryFilter:
    """What of a typed query is written: the query, ends stripped, or None when dropped."""

    def __init__(self, path: Path | None = None):
        self.path = ignore_path() if path is None else Path(path)
        self.patterns = read_patterns(self.path)

    def secret(self, query: str) -> bool:
        """Whether a stored `query` is one never to keep: it looks like a secret, matches an
        ignore pattern, or seeks sexual content involving minors (mtn_keras.data.safety)."""
        return (
            looks_secret(query)
            or any(p.search(query) for p in self.patterns)
            or child_unsafe(normalise(query))
        )

    def kept(self, typed: str) -> str | None:
        """`typed` as it is stored, or None: blank, typed with a leading space, or secret."""
        if not typed.strip() or typed[:1].isspace():
            return None
        query = typed.strip()
        return None if self.secret(query) else query
