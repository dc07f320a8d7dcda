"""The one interface over every kind of model: the input checks, the padding, the choice of
signature, and the answers as plain dataclasses.

A backend (a `runner`) only calls a signature: `signatures` maps each signature it has to the
names of its outputs, `settings` (if it has them) holds what the model says of itself (an
export's export.json), and `run(name, inputs)` takes the inputs as lists of strings, already
padded to one width, and answers arrays (numpy, or lists that numpy reads). Everything a
person could get wrong is checked here, once, for every backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mtn_keras.client.reasons import why_empty
from mtn_keras.data.padding import front_padded
from mtn_keras.data.safety import shown
from mtn_keras.serving.requests import MAX_QUERY_CHARS, MAX_ROW, MAX_SESSIONS
from mtn_keras.serving.savedmodel import SavedModelError


class SuggestError(SavedModelError):
    """Anything `mtn_keras.load` or a suggester refuses or fails at: bad input, a path that is
    no model, an unreachable server, a failed call. The message says what and where.

    A SavedModelError, so that callers that catch those catch it too."""


@dataclass(frozen=True)
class Suggestion:
    """One suggested next query: its text, its score (the ranker's probability with a ranking,
    else the length-normalised log-probability), and who proposed it (`model`, `log`,
    `history`, `session`, `fixed` or their union such as `model+log`, or `popular`; "" when
    the model does not say)."""

    text: str
    score: float
    source: str = ""


class Suggestions(list):
    """One session's answer: its list of Suggestion, best first (equal to the plain list),
    with `why`: "" when it holds any, else one sentence saying why it is empty (reasons.py)."""

    def __init__(self, items=(), why=""):
        super().__init__(items)
        self.why = why


@dataclass(frozen=True)
class Attention:
    """The session encoder's attention over the queries the model kept (padding removed).

    `weights` is [layers, heads, K, K], rows attending; `queries` the K kept queries as the
    model read them (normalised), oldest first."""

    weights: np.ndarray
    queries: tuple[str, ...]


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
        self.signatures = runner.signatures  # each signature's output names
        # k, max_query_tokens, history_size...: export.json's; none from a server
        self.settings = getattr(runner, "settings", {})

    def suggest(self, session, history=None):
        """The suggestions for the query after `session`: a Suggestions (a list of Suggestion,
        best first, saying in `why` why it is empty when it is), or a list of them for a
        batch. `history`: the searcher's earlier queries, oldest first (a list of lists for a
        batch), for a model that reads them."""
        return self.complete(session, "", history)

    def complete(self, session, prefix, history=None):
        """As `suggest`, every suggestion starting with the words of `prefix` (what has been
        typed of the next query: a string, or for a batch one string for all or a list of one
        per session)."""
        sessions, prefixes, histories, batched = _asked(session, prefix, history)
        out = self._call(sessions, prefixes, histories)
        try:
            answers = self._answers(out)
        except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError) as error:
            raise SuggestError(
                f"{self.where} answered outputs that are not suggestions "
                f"({type(error).__name__}: {str(error)[:200]})"
            ) from None
        if len(answers) != len(sessions):
            raise SuggestError(
                f"{self.where} answered {len(answers)} lists for {len(sessions)} sessions"
            )
        rows = zip(answers, sessions, prefixes, histories or [None] * len(sessions))
        answers = [
            Suggestions(items, "" if items else self.why(asked, typed, texts, earlier))
            for (items, texts), asked, typed, earlier in rows
        ]
        return answers if batched else answers[0]

    def why(self, session, prefix, answered, history=None):
        """Why the list of `session` and `prefix` is empty, the model having `answered` those
        texts (reasons.py); for callers that read the outputs themselves (the app)."""
        return why_empty(session, prefix, answered, self.settings, history)

    def _answers(self, out):
        """(the Suggestion shown, every text the model answered) of each row of the
        signature's outputs: what may not be shown is left out."""
        scores = np.asarray(out["scores"], dtype=np.float32)
        texts = [[_text(text) for text in row] for row in out["suggestions"]]
        sources = out.get("sources", np.full(scores.shape, ""))
        if scores.ndim != 2 or [len(row) for row in texts] != [scores.shape[1]] * len(scores):
            raise ValueError("suggestions and scores differ in shape")
        return [
            (
                [
                    Suggestion(text, float(score), _text(source))
                    for text, score, source in zip(row, row_scores, row_sources)
                    if text and shown(text, self.explicit_shown)
                ],
                row,
            )
            for row, row_scores, row_sources in zip(texts, scores, sources)
        ]

    def outputs(self, session, prefix="", history=None):
        """The signature's outputs themselves, checked and padded as for `complete`: a dict
        of arrays (or lists) whose first axis is the batch (one row for one session), for
        callers that show more than the suggestions (the app's copy and history panels)."""
        return self._call(*_asked(session, prefix, history)[:3])

    def attention(self, session):
        """The session encoder's attention (an Attention; a list of them for a batch)."""
        sessions, batched = _sessions(session)
        if "session_attention" in self._runner.signatures["complete"]:
            out = self._call(sessions, [""] * len(sessions), None)
            weights, queries = out["session_attention"], out.get("queries")
        else:
            out = self._run("session_attention", {"session": front_padded(sessions)})
            weights, queries = out["attention"], out.get("queries")
        answers = [
            _kept(np.asarray(weights[i]), None if queries is None else queries[i])
            for i in range(len(sessions))
        ]
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
        """The outputs of `complete`, or of `complete_with_history` when a history is given."""
        inputs = {"session": front_padded(sessions), "prefix": prefixes}
        if histories is None:
            return self._run("complete", inputs)
        self.check_history()
        return self._run("complete_with_history", {**inputs, "history": front_padded(histories)})

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


def _kept(weights, queries):
    """An Attention of `weights` [layers, heads, S, S] without the padding slots (an empty
    entry in `queries`; every slot when the model does not say)."""
    if queries is None:
        return Attention(weights, ())
    texts = [_text(query) for query in queries]
    kept = [i for i, text in enumerate(texts) if text]
    return Attention(weights[:, :, kept][:, :, :, kept], tuple(texts[i] for i in kept))


def _text(value) -> str:
    """A string output as text: TensorFlow answers bytes, a REST server strings."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
