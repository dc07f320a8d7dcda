"""The filters' rules in plain Python, for what runs outside the graph (the query-log index,
the evaluation's quality counts, the anchors' filtering, the ranker's lists). Their graph
twins are in `filters.py`; tests/ranking/test_ranking_rules.py checks that both agree."""

from collections.abc import Callable, Collection, Container, Iterable, Sequence

from mtn_keras.data.text import completes

# Words that say nothing of what a query is about: sharing one ("brisnet race of the day"
# after "bank of america") relates no suggestion to a session.
FUNCTION_WORDS = tuple(
    "a an and are as at be by com do for from how i in is it my net of on or org s the to "
    "what with www you your".split()
)


def content_words(text: str) -> set[str]:
    """The words of `text` that are no FUNCTION_WORDS."""
    return set(text.split()) - set(FUNCTION_WORDS)


def repeats_session(text: str, context: Iterable[str]) -> bool:
    """The suggestion equals a query of the session or its words all lie inside one."""
    words = set(text.split())
    return any(words <= set(query.split()) for query in context)


def repeats_a_word(text: str) -> bool:
    """Some word of the suggestion appears twice."""
    words = text.split()
    return len(set(words)) != len(words)


def blocks(text: str, phrases: Iterable[str]) -> bool:
    """True when the normalised `text` holds one of `phrases` as whole words."""
    padded = f" {text} "
    return any(f" {phrase} " in padded for phrase in phrases)


def blocker(phrases: Iterable[str]) -> Callable[[str], bool]:
    """`blocks` against one list of `phrases`, for many texts: a normalised text's runs of
    words are looked up in a set, so a text costs its length, not the list's."""
    phrases = list(phrases)
    plain = {p for p in phrases if p and p == " ".join(p.split())}
    odd = [p for p in phrases if p not in plain]
    longest = max((p.count(" ") + 1 for p in plain), default=0)

    def blocked(text: str) -> bool:
        words = text.split()
        if text != " ".join(words):
            return blocks(text, phrases)
        runs = (
            " ".join(words[i:j])
            for i in range(len(words))
            for j in range(i + 1, min(i + longest, len(words)) + 1)
        )
        return any(run in plain for run in runs) or blocks(text, odd)

    return blocked


def word_set(text: str) -> str:
    """The key of a suggestion's words in any order: two suggestions with the same key are
    the same suggestion, and only the better is shown."""
    return " ".join(sorted(text.split()))


def relates(
    text: str,
    context: Collection[str],
    history: Sequence[str] = (),
    follows: Container[tuple[str, str]] = frozenset(),
    prefix: str = "",
) -> bool:
    """The earlier query `text` relates to the session (`context`): it shares a word (no
    FUNCTION_WORDS) with a session query, came right after one in the user's `history`,
    followed one in the log (`follows`: (query, later query of its log session) pairs), or
    starts with the typed `prefix` (data.text.completes). An earlier query that relates to
    nothing is the user's past, not this session's next step. The graph's twin is
    `filters.related`."""
    if prefix.strip() and completes(text, prefix):
        return True
    words = content_words(text)
    if any(words & set(query.split()) for query in context):
        return True
    queries = set(context)
    after_session = any(h == text and p in queries for p, h in zip(history, history[1:]))
    return after_session or any((query, text) in follows for query in context)


def log_follows(sessions: Iterable[Sequence[str]]) -> set[tuple[str, str]]:
    """The (query, later query of the same session) pairs of a log's sessions: what
    `relates` counts as following in the log."""
    return {
        (first, later)
        for session in sessions
        for i, first in enumerate(session)
        for later in session[i + 1 :]
        if later != first
    }
