"""The one interface over every kind of model: the input checks, the padding, the choice of
signature, and the answers as plain dataclasses.

A backend (a `runner`) only calls a signature: `signatures` maps each signature it has to the
names of its outputs, `settings` (if it has them) holds what the model says of itself (an
export's export.json), and `run(name, inputs)` takes the inputs as lists of strings, already
padded to one width, and answers arrays (numpy, or lists that numpy reads). Everything a
person could get wrong is checked here, once, for every backend.
"""

from __future__ import annotations

from mtn_keras.client.answer import Answer, kept_attention, read_rows
from mtn_keras.client.reasons import why_empty
from mtn_keras.data.padding import front_padded
from mtn_keras.serving.requests import MAX_QUERY_CHARS, MAX_ROW, MAX_SESSIONS
from mtn_keras.serving.savedmodel import SavedModelError


class SuggestError(SavedModelError):
    """Anything `mtn_keras.load` or a suggester refuses or fails at: bad input, a path that is
    no model, an unreachable server, a failed call. The message says what and where.

    A SavedModelError, so that callers that catch those catch it too."""


class Suggester:
    """Suggestions and attention for one session (a list of query strings, oldest first) or a
    batch (a list of such lists). One session gets one answer; a batch gets a list of them, in
    order. `[]` is one session without a query."""

    def __init__(self, runner, where: str, explicit_shown: bool = False):
        self._runner = runner
        self.where = where  # what the messages name: a path or a URL
        # Whatever the model answers, an explicit suggestion is dropped unless asked for, and
        # one that seeks sexual content involving minors always (data/safety.py).
        self.explicit_shown = explicit_shown
        if "complete" not in runner.signatures:
            raise SuggestError(
                f"{where} has no `complete` signature: it is not an export of mtn-keras"
            )
        self.reads_history = "complete_with_history" in runner.signatures
        # Every list comes from one signature: `complete` is `complete_with_history` with an
        # empty history (docs/contracts.md), and one graph spares a second's compilation.
        self.answering = "complete_with_history" if self.reads_history else "complete"
        self.signatures = runner.signatures  # each signature's output names
        # A recent export answers the session attention with the suggestions (one call).
        self.answers_attention = "session_attention" in runner.signatures[self.answering]
        # k, max_query_tokens, history_size...: export.json's; none from a server
        self.settings = getattr(runner, "settings", {})
        # How many suggestions a list holds at most: the export's k, or as answered.
        self.list_size = self.settings.get("k")

    def suggest(self, session, history=None, details=False):
        """The suggestions for the query after `session`: an Answer (a list of Suggestion,
        best first, saying in `why` why it is empty when it is), or a list of them for a
        batch. `history`: the searcher's earlier queries, oldest first (a list of lists for a
        batch), for a model that reads them. `details`: the Answer says what the model read
        too (its copy and session attention, the history it kept)."""
        return self.complete(session, "", history, details)

    def complete(self, session, prefix, history=None, details=False):
        """As `suggest`, every suggestion starting with the words of `prefix` (what has been
        typed of the next query: a string, or for a batch one string for all or a list of one
        per session)."""
        sessions, prefixes, histories, batched = _asked(session, prefix, history)
        out = self._call(sessions, prefixes, histories)
        try:
            rows = read_rows(out, sessions, self.explicit_shown, details)
        except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as error:
            raise SuggestError(
                f"{self.where} answered outputs that are not suggestions "
                f"({type(error).__name__}: {str(error)[:200]})"
            ) from None
        self.list_size = len(rows[0][1]) if rows else self.list_size
        if len(rows) != len(sessions):
            raise SuggestError(
                f"{self.where} answered {len(rows)} lists for {len(sessions)} sessions"
            )
        answers = [
            Answer(
                items,
                "" if items else self.why(asked, typed, texts, earlier),
                session=asked,
                prefix=typed,
                **found,
            )
            for (items, texts, found), asked, typed, earlier in zip(
                rows, sessions, prefixes, histories or [None] * len(sessions)
            )
        ]
        return answers if batched else answers[0]

    def why(self, session, prefix, answered, history=None):
        """Why the list of `session` and `prefix` is empty, the model having `answered` those
        texts (reasons.py)."""
        return why_empty(session, prefix, answered, self.settings, history)

    def attention(self, session):
        """The session encoder's attention (an Attention; a list of them for a batch): from
        the suggestions' signature when it answers it, else from `session_attention`."""
        sessions, batched = _sessions(session)
        if self.answers_attention:
            out = self._call(sessions, [""] * len(sessions), None)
            weights = out["session_attention"]
        else:
            out = self._run("session_attention", {"session": front_padded(sessions)})
            weights = out["attention"]
        queries = out.get("queries")
        try:
            answers = [
                kept_attention(weights[i], None if queries is None else queries[i], sessions[i])
                for i in range(len(sessions))
            ]
        except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as error:
            raise SuggestError(
                f"{self.where} answered an attention that cannot be read "
                f"({type(error).__name__}: {str(error)[:200]})"
            ) from None
        return answers if batched else answers[0]

    def check_history(self):
        """A SuggestError unless the model reads a history: a caller with many calls to make
        asks before the first."""
        if not self.reads_history:
            raise SuggestError(
                f"{self.where} does not read a history (no complete_with_history signature): "
                "rank its run folder (python -m mtn_keras.rank) and export it again, or call "
                "without history"
            )

    def _call(self, sessions, prefixes, histories):
        """The outputs of the one signature every list comes from (`answering`), with an
        empty history when none is given."""
        inputs = {"session": front_padded(sessions), "prefix": prefixes}
        if histories is not None:
            self.check_history()
            inputs["history"] = front_padded(histories)
        elif self.answering == "complete_with_history":
            inputs["history"] = [[]] * len(sessions)
        return self._run(self.answering, inputs)

    def _run(self, name, inputs):
        try:
            return self._runner.run(name, inputs)
        except SuggestError:
            raise
        except SavedModelError as error:
            raise SuggestError(str(error)) from error


def _cut(queries):
    """The last MAX_ROW queries, each cut to MAX_QUERY_CHARS characters, as the REST server
    takes them: no call in this process, however long its input, costs more than one it
    would accept (the model reads the last few queries and their first words)."""
    return [query[:MAX_QUERY_CHARS] for query in queries[-MAX_ROW:]]


def _sessions(session):
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


def _asked(session, prefix, history):
    """(the sessions, their prefixes, their histories or None, whether a batch was given),
    checked as `_sessions`, `_prefixes` and `_histories` say."""
    sessions, batched = _sessions(session)
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
