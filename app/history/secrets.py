"""Whether a typed query holds a secret, so that the history never keeps it. The rules follow
the public ones of secret scanners: detect-secrets' keyword detector (a password-like word
followed by a value, "my password is hunter2", "pw: x"), gitleaks' and atuin's token rules
(access keys, tokens, private key headers, credentials in a URL, long key-like tokens), and
the checksums of the numbers people paste: card numbers by Luhn, IBANs by ISO 7064 mod 97,
US social security numbers by their structure. An ordinary query ("password reset", "bowling
pin set", "route 66 diner") is kept.

Every check is linear in the query's length (a pattern starts only where its run of
characters starts, and never gives back what it took), and a query longer than anyone types
is judged a secret unread: the filter's cost has a bound whatever is pasted or imported.
"""

import re

# A value after these is a secret: "password hunter2", "my password is hunter2".
PASSWORD_WORDS = {"password", "passwd", "passwort", "pwd", "passcode", "passphrase", "passwords"}
# These only with ":" or "=" right after them: "pass: hunter2", "pw=x" (not "mountain pass").
SHORT_PASSWORD_WORDS = {"pass", "pw", "pword", "psw"}
# After these, a value with at least this many digits is: "ssn 078-05-1120", "my pin is
# 1234", "api key a1b2" (not "uss hartford ssn 768", a submarine).
VALUE_WORDS = {
    "pin": 4, "ssn": 9, "social": 9, "cvv": 3, "cvc": 3, "cvv2": 3, "secret": 1, "token": 1,
    "apikey": 1, "accesskey": 1, "account": 6, "acct": 6, "routing": 9, "passcode": 1,
}  # fmt: skip
# Words between the keyword and its value: "pin is 1234", "pin code 4821", "password for
# gmail hunter2".
FILLERS = {
    "is", "was", "=", ":", "-", "code", "number", "num", "no", "#", "key", "for", "to", "of",
    "my", "the", "a", "on", "at", "in", "new", "old", "and", "are",
}  # fmt: skip
# Words that follow a password word in ordinary searches ("password reset", "password is not
# working"): never a value.
COMMON_AFTER = {
    "reset",
    "recovery",
    "recover",
    "forgot",
    "forgotten",
    "change",
    "changer",
    "changed",
    "manager",
    "managers",
    "generator",
    "requirements",
    "help",
    "protect",
    "protected",
    "protection",
    "strength",
    "checker",
    "hint",
    "hints",
    "expired",
    "policy",
    "security",
    "safe",
    "keeper",
    "vault",
    "app",
    "apps",
    "cracker",
    "crack",
    "hack",
    "list",
    "lists",
    "ideas",
    "tips",
    "examples",
    "not",
    "incorrect",
    "wrong",
    "invalid",
    "required",
    "needed",
    "locked",
    "lost",
    "reminder",
    "retrieval",
    "retrieve",
    "remover",
    "removal",
    "remove",
    "reveal",
    "finder",
    "unlock",
    "bypass",
    "page",
    "site",
    "sites",
    "box",
    "field",
    "case",
    "sensitive",
    "too",
    "weak",
    "strong",
    "length",
    "rules",
    "game",
    "games",
    "with",
    "by",
    "from",
    "or",
    "if",
    "how",
    "what",
    "where",
    "windows",
    "xp",
    "user",
    "username",
    "file",
    "files",
    "word",
    "excel",
    "pdf",
    "zip",
    "shareware",
    "software",
    "program",
    "programs",
    "tool",
    "tools",
    "free",
    "download",
    "downloads",
}
# What a password is for, named between the word and its value ("password for gmail
# hunter2"): read past, as the fillers are.
SERVICES = {
    "email", "e-mail", "mail", "gmail", "yahoo", "aol", "hotmail", "myspace", "bank", "wifi",
    "router", "account", "accounts", "computer", "laptop", "phone", "netflix", "ebay", "paypal",
    "chase", "amazon", "facebook", "admin", "root", "login",
}  # fmt: skip
CARD = re.compile(r"(?<!\d)\d(?:[ .\-]{0,2}\d){12,18}(?!\d)")
SSN = re.compile(r"(?<![\d-])(\d{3})[- ]?(\d{2})[- ]?(\d{4})(?![\d-])")
IBAN = re.compile(r"\b([a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?)\b", re.IGNORECASE)
CREDENTIAL = re.compile(
    r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)++:\S|(?<!\w)\w++://[^/\s:@]++:[^/\s@]++@"
)
PRIVATE_KEY = re.compile(r"BEGIN (?:[A-Z]++ ){0,3}PRIVATE KEY", re.IGNORECASE)
KEY_LIKE = re.compile(r"[A-Za-z0-9_\-+/=]{20,}")


def luhn(digits: str) -> bool:
    """Whether `digits` passes the Luhn check of card numbers."""
    total = 0
    for i, digit in enumerate(int(d) for d in reversed(digits)):
        total += digit if i % 2 == 0 else (digit * 2 - 9 if digit > 4 else digit * 2)
    return total % 10 == 0


def _iban_valid(text: str) -> bool:
    """Whether `text` (spaces allowed) passes the IBAN check: mod 97 of its digits is 1."""
    code = text.replace(" ", "").upper()
    moved = code[4:] + code[:4]
    digits = "".join(str(int(char, 36)) for char in moved)
    return len(code) >= 15 and int(digits) % 97 == 1


def _ssn_like(area: str, group: str, serial: str) -> bool:
    """Whether the three parts can be a social security number (no 000, 666 or 9xx area, no
    00 group, no 0000 serial)."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _tokens(query: str) -> list[str]:
    """The query's tokens, ":" and "=" as tokens of their own ("pw:x" -> "pw", ":", "x")."""
    return re.sub(r"([:=])", r" \1 ", query).lower().split()


def _value(tokens: list[str], start: int) -> str:
    """The first token from `start` on past the fillers and the services ("" if none): what
    stands where a keyword's value would ("password for gmail hunter2" -> "hunter2")."""
    for token in tokens[start : start + 5]:
        word = token.strip(".,;!?\"'()")
        if word and word not in FILLERS and word not in SERVICES:
            return word
    return ""


def _password_value(word: str) -> bool:
    """Whether `word`, after a password word, is a value: it holds a digit or a symbol, is
    long, or is no word an ordinary search puts there ("password reset")."""
    return bool(word) and (
        bool(re.search(r"[\d@#$%^&*+/\\|~!]", word)) or len(word) >= 20 or word not in COMMON_AFTER
    )


def _keyword_secret(query: str) -> bool:
    """A password-like word followed by a value, or a value word followed by a number."""
    joined = " ".join(_tokens(query))
    for keyword in ("pass word", "api key", "access key"):
        joined = joined.replace(keyword, keyword.replace(" ", ""))
    tokens = joined.split()
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in PASSWORD_WORDS and _password_value(_value(tokens, i + 1)):
            return True
        if token in SHORT_PASSWORD_WORDS and after in (":", "="):
            if _password_value(_value(tokens, i + 2)):
                return True
        if token in VALUE_WORDS:
            digits = re.sub(r"\D", "", _value(tokens, i + 1))
            if digits and len(digits) >= VALUE_WORDS[token]:
                return True
    return False


def _numbers_secret(query: str) -> bool:
    """A card number (Luhn), an IBAN (mod 97) or a social security number."""
    for run in CARD.finditer(query):
        digits = re.sub(r"\D", "", run.group())
        if 13 <= len(digits) <= 19 and luhn(digits):
            return True
    if any(_iban_valid(found.group(1)) for found in IBAN.finditer(query)):
        return True
    return any(_ssn_like(*found.groups()) for found in SSN.finditer(query))


# Longer than the longest query a person types (search boxes take about 2,000 characters):
# judged a secret, so never kept, without reading it.
MAX_CHARS = 2048


def looks_secret(query: str) -> bool:
    """Whether `query` looks like it holds a secret (see the module's docstring); one longer
    than MAX_CHARS is taken as one."""
    return len(query) > MAX_CHARS or holds_secret(query)


def holds_secret(query: str) -> bool:
    """Whether `query`, of any length, holds a secret by the checks of the module's
    docstring, in time linear in its length."""
    if CREDENTIAL.search(query) or PRIVATE_KEY.search(query):
        return True
    if _keyword_secret(query) or _numbers_secret(query):
        return True
    return any(
        re.search(r"\d", token) and re.search(r"[A-Za-z]", token)
        for token in KEY_LIKE.findall(query)
    )
