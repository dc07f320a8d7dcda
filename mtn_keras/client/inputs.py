"""What a caller may give the client, checked once for every runner: a session or a batch of
them, prefixes, histories, each cut as the REST server takes them."""

from __future__ import annotations

from mtn_keras.serving.requests import MAX_QUERY_CHARS, MAX_ROW, MAX_SESSIONS
from mtn_keras.serving.savedmodel import SuggestError

Session = list[str] | list[list[str]]  # one session's queries, or a batch of sessions


def _cut(queries):
    """The last MAX_ROW queries, each cut to MAX_QUERY_CHARS characters, as the REST server
    takes them: no call in this process, however long its input, costs more than one it
    would accept (the model reads the last few queries and their first words)."""
    return [query[:MAX_QUERY_CHARS] for query in queries[-MAX_ROW:]]


def sessions_of(session: object) -> tuple[list[list[str]], bool]:
    """(the sessions as lists of str, cut as `_cut` says, whether a batch was given); a
    SuggestError naming the first thing that is neither."""
    if not isinstance(session, (list, tuple)):
        raise SuggestError(
            f"a session is a list of query strings (or a batch, a list of such lists), "
            f"not a {type(session).__name__}"
        )
    lists = [isinstance(row, (list, tuple)) for row in session]
    if not any(lists):
        return [_cut(_strings(session, "session"))], False
    if not all(lists):
        odd = lists.index(not lists[0])
        raise SuggestError(
            f"session item {odd} is a {type(session[odd]).__name__} and item 0 a "
            f"{type(session[0]).__name__}: give one session (a list of strings) or a batch "
            "(a list of lists of strings), not a mix"
        )
    if len(session) > MAX_SESSIONS:
        raise SuggestError(f"a batch of {len(session)} sessions; at most {MAX_SESSIONS}")
    return [_cut(_strings(row, f"session {i}")) for i, row in enumerate(session)], True


def asked(
    session: object, prefix: object, history: object
) -> tuple[list[list[str]], list[str], list[list[str]] | None, bool]:
    """(the sessions, their prefixes, their histories or None, whether a batch was given),
    checked as `sessions_of`, `_prefixes` and `_histories` say."""
    sessions, batched = sessions_of(session)
    count = len(sessions)
    return sessions, _prefixes(prefix, count, batched), _histories(history, count, batched), batched


def _strings(values, what):
    """`values` unless one of them is not a string; then a SuggestError naming it."""
    for j, value in enumerate(values):
        if not isinstance(value, str):
            raise SuggestError(
                f"{what}, item {j}: {value!r} is a {type(value).__name__}, not a string"
            )
    return values


def _prefixes(prefix, count, batched):
    """One prefix per session: a string for all, or for a batch a list of `count` strings."""
    if isinstance(prefix, str):
        return [prefix[:MAX_QUERY_CHARS]] * count
    if batched and isinstance(prefix, (list, tuple)):
        if len(prefix) != count:
            raise SuggestError(f"{len(prefix)} prefixes for a batch of {count} sessions")
        return [text[:MAX_QUERY_CHARS] for text in _strings(prefix, "prefix")]
    raise SuggestError(
        f"prefix is a {type(prefix).__name__}: give a string (or a list of one per session "
        "of a batch)"
    )


def _histories(history, count, batched):
    """One history per session (None for no history): a list of strings for one session, a
    list of `count` such lists for a batch."""
    if history is None:
        return None
    if not isinstance(history, (list, tuple)):
        raise SuggestError(f"history is a {type(history).__name__}, not a list of strings")
    if not batched:
        return [_cut(_strings(history, "history"))]
    if len(history) != count or not all(isinstance(row, (list, tuple)) for row in history):
        raise SuggestError(
            f"for a batch of {count} sessions, history is a list of {count} lists of strings"
        )
    return [_cut(_strings(row, f"history {i}")) for i, row in enumerate(history)]
