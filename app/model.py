"""The app's model backend: an exported SavedModel loaded in this process and called for one
session through the client (mtn_keras.client), as RemoteBackend calls a server.

It uses only the signatures of docs/contracts.md, so any export that follows them works here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.base.xla_setup import compiled_before, mark_compiled
from mtn_keras.client.local import SavedModel
from mtn_keras.client.suggester import Suggester
from mtn_keras.data.history import HISTORY_SIZE
from mtn_keras.data.safety import shown
from mtn_keras.data.text import normalise
from mtn_keras.serving.savedmodel import SIGNATURES, bundled_model, check, model_name, resolve
from mtn_keras.serving.savedmodel import SavedModelError as ModelError

DEFAULT_MODEL = bundled_model()

__all__ = [
    "DEFAULT_MODEL",
    "Backend",
    "ModelError",
    "SessionAttention",
    "Suggestion",
    "Suggestions",
]


@dataclass
class Suggestion:
    """One suggested next query: its score, where it came from and what it copied from each word."""

    text: str
    score: float
    copy_attention: np.ndarray | None  # [S', n], aligned with Suggestions.source_tokens
    source: str | None = None  # "model", "log", "model+log", "history", "popular"…

    @property
    def from_history(self) -> bool:
        """Whether the searcher's own history proposed it."""
        return "history" in (self.source or "")

    @property
    def corrected(self) -> bool:
        """Whether it completes what was typed only with a slip corrected (source `fixed`)."""
        return "fixed" in (self.source or "").split("+")


@dataclass
class Suggestions:
    """The suggestions for one session and typed prefix, best first, with the words the model
    read."""

    items: list[Suggestion]
    source_tokens: list[list[str]]  # [S'][n]: the kept queries' normalised words, "" for padding
    session: tuple[str, ...] = ()
    prefix: str = ""
    history: list[str] = field(default_factory=list)  # the earlier queries the model kept
    history_attention: np.ndarray | None = None  # [len(history)]: how much each counted
    positions: list[int] = field(default_factory=list)  # source_tokens' rows in the session
    why: str = ""  # why `items` is empty, in one sentence (the client's reasons.py)


@dataclass
class SessionAttention:
    """The session encoder's attention over the queries the model kept, with their texts and
    their 0-based positions in the session."""

    weights: np.ndarray  # [layers, heads, K, K]; rows attend
    queries: list[str]  # the K kept queries as the model normalised them
    positions: list[int] = field(default_factory=list)


def used_queries(session: list[str] | tuple[str, ...], kept: int) -> list[int]:
    """The 0-based session positions of the `kept` queries the model used (how many the
    graph's answer says): the answers carry them as `positions`.

    The model drops queries without words and keeps the last ones of the rest; the graph
    says which readings it kept, not where they stand in the session.
    """
    with_words = [index for index, query in enumerate(session) if normalise(query)]
    return with_words[len(with_words) - kept :] if kept else []


def ignored_reasons(session: list[str] | tuple[str, ...], positions: list[int]) -> dict[int, str]:
    """Why each session query the model did not use (not at `positions`) was left out, by
    0-based position."""
    window = len(positions)
    return {
        index: "no words" if not normalise(query) else f"outside the model's window of {window}"
        for index, query in enumerate(session)
        if index not in positions
    }


def read_as(attention: SessionAttention, session: list[str] | tuple[str, ...]) -> dict[int, str]:
    """The session queries that the model read through a correction of a slip, by 0-based
    position: the model's reading."""
    return {
        index: reading
        for index, reading in zip(attention.positions, attention.queries)
        if reading != normalise(session[index])
    }


def kept_attention(
    session: list[str], weights: np.ndarray, queries: np.ndarray
) -> SessionAttention:
    """The attention `weights` [layers, heads, S', S'] over the queries of `session` the model
    kept: without the padding slots (an empty entry of `queries`, bytes)."""
    kept = np.flatnonzero(queries != b"")
    weights = weights[:, :, kept][:, :, :, kept]
    read = [query.decode() for query in queries[kept]]
    return SessionAttention(weights, read, used_queries(session, len(read)))


def resolve_model_path(path: str | Path | None) -> Path:
    """The SavedModel directory for `path`: the default model, or `path/savedmodel` if it exists."""
    return resolve(path) if path else DEFAULT_MODEL


class ModelCalls:
    """What the app asks of a model, whatever runs it: `suggestions` and `attention` for one
    session, oldest first, with the searcher's earlier queries (`history`, oldest first, as
    the store hands them: the graph keeps its own last ones) for a model that reads them. A
    subclass calls the model through `_client` (a Suggester of mtn_keras.client) and answers
    `_outputs` (the suggestion signature's outputs, as numpy arrays with bytes for text); it
    sets `name`, `has_history`, `history_size` and `_attention_in_suggest`."""

    start_seconds: dict[str, float]  # what starting took, step by step
    notes: tuple[str, ...] = ()  # what the person should hear once the model is ready
    withheld_history = False  # whether the model reads history that the app does not send
    # Show sexually explicit suggestions (mtn-tui --explicit)? Whatever the model or server
    # answers, the app shows none unless asked, and never one that seeks abuse material.
    explicit_shown = False

    def _prepare_calls(self) -> None:
        self._lock = threading.RLock()  # one model call at a time; the workers share it
        self._last = None  # ((session, prefix, history), outputs) of the latest call

    def suggestions(
        self, session: list[str], prefix: str = "", history: tuple[str, ...] = ()
    ) -> Suggestions:
        """Suggestions for the query after `session` that start with the words of `prefix`
        (none typed: any next query), reading `history` if the model can. Every list comes
        from one signature, `complete_with_history` (`complete` without history): with an
        empty prefix it answers as `suggest` (docs/contracts.md)."""
        sent = history if self.has_history else ()
        return self._suggestions(self._answer(session, prefix, history), session, prefix, sent)

    def _answer(self, session: list[str], prefix: str, history: tuple[str, ...]):
        """The outputs for `session`, `prefix` and `history`, those of the latest call kept: the
        attention of a session reads the outputs of its suggestions (the app asks for both
        after each query)."""
        asked = (tuple(session), prefix, tuple(history) if self.has_history else ())
        with self._lock:
            if self._last is None or self._last[0] != asked:
                self._last = (asked, self._outputs(session, prefix, asked[2]))
            return self._last[1]

    def attention(self, session: list[str], history: tuple[str, ...] = ()) -> SessionAttention:
        """The session encoder's attention over the queries the model kept.

        The model drops queries without words, keeps the last ones and pads short
        sessions; the padding slots (an empty `queries` entry) are removed here.
        """
        if not self._attention_in_suggest:
            return self._own_attention(session)
        found = self._answer(session, "", history)
        return kept_attention(session, found["session_attention"][0], found["queries"][0])

    def _own_attention(self, session: list[str]) -> SessionAttention:
        """The attention of a model whose suggestions do not carry it (its own signature)."""
        with self._lock:
            found = self._client.attention(list(session))
        weights = np.asarray(found.weights, dtype=np.float32)
        queries = list(found.queries)
        if len(queries) != weights.shape[-1]:  # the model does not say: none was dropped
            queries = [normalise(query) for query in session][-weights.shape[-1] :]
        return SessionAttention(weights, queries, used_queries(session, len(queries)))

    def _suggestions(
        self, out: dict[str, np.ndarray], session: list[str], prefix: str, history: tuple[str, ...]
    ) -> Suggestions:
        # Source rows of padding (all "") are dropped, so row i is the i-th kept query.
        kept = np.flatnonzero((out["source_tokens"][0] != b"").any(axis=-1))
        tokens = [[word.decode() for word in query] for query in out["source_tokens"][0][kept]]
        sources = out["sources"][0] if "sources" in out else [b""] * len(out["suggestions"][0])
        items = [
            Suggestion(text.decode(), float(score), attention[kept], source.decode() or None)
            for text, score, attention, source in zip(
                out["suggestions"][0], out["scores"][0], out["copy_attention"][0], sources
            )
            if text and shown(text.decode(), self.explicit_shown)
        ]
        positions = used_queries(session, len(tokens))
        suggestions = Suggestions(items, tokens, tuple(session), prefix, positions=positions)
        if not items:
            texts = [text.decode() for text in out["suggestions"][0]]
            suggestions.why = self._client.why(list(session), prefix, texts, list(history))
        if "history" in out:
            read = np.flatnonzero(out["history"][0] != b"")
            suggestions.history = [query.decode() for query in out["history"][0][read]]
            suggestions.history_attention = out["history_attention"][0][read]
        return suggestions


class Backend(ModelCalls):
    """A SavedModel loaded in this process through the client (ModelCalls says what it
    answers).

    `progress` hears each start-up step ("Compiling complete…") as it begins;
    `prepare_tensorflow(tf)` runs once TensorFlow is imported, before the first call (the entry
    point's process-wide settings: the backend sets none itself).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        progress: Callable[[str], None] | None = None,
        prepare_tensorflow: Callable | None = None,
    ):
        progress = progress or (lambda step: None)
        self.start_seconds = {}
        self.path = resolve_model_path(path)
        self.name = model_name(self.path)
        check(self.path)  # before TensorFlow is imported, which takes seconds
        progress("Loading TensorFlow…")
        began = time.perf_counter()
        tf = import_tensorflow()
        if prepare_tensorflow is not None:
            prepare_tensorflow(tf)
        self.start_seconds["TensorFlow"] = time.perf_counter() - began
        progress(f"Reading the model {self.name}…")
        runner = SavedModel(self.path, SIGNATURES)
        self._client = Suggester(runner, str(self.path))
        self._signature = runner.called("complete")  # the one graph every list comes from
        self.load_seconds = self.start_seconds["reading"] = runner.load_seconds
        self.has_sources = "sources" in self._client.signatures["complete"]
        # A model with the history signatures reads the searcher's earlier queries too.
        self.has_history = self._client.reads_history
        # the earlier queries a history model keeps; an export.json that does not say means
        # the graph's own HISTORY_SIZE
        self.history_size = int(self._client.settings.get("history_size", HISTORY_SIZE))
        # An export whose suggestions also give the session attention answers both at once.
        self._attention_in_suggest = "session_attention" in self._client.signatures["complete"]
        self._prepare_calls()
        self._warm_up(progress)

    def _warm_up(self, progress: Callable[[str], None]) -> None:
        """Call the one suggestion signature once: TensorFlow's first call of a graph compiles
        it, which would otherwise land on the user's first keystroke."""
        steps = [(self._signature, lambda: self.suggestions(["a"], "a"))]
        if not self._attention_in_suggest:  # an older export: its own attention graph
            steps.append(("session_attention", lambda: self.attention(["a"])))
        for name, call_it in steps:
            if compiled_before(self.path, name):
                progress(f"Preparing {name} (compiled at an earlier start, read from disk)…")
            else:
                progress(f"Compiling {name} (cached on disk for the next start)…")
            began = time.perf_counter()
            call_it()
            self.start_seconds[name] = time.perf_counter() - began
            mark_compiled(self.path, name)

    def _outputs(
        self, session: list[str], prefix: str, history: tuple[str, ...]
    ) -> dict[str, np.ndarray]:
        """The client's outputs for `session`, `prefix` and `history` (already cut to what
        the model reads; sent only to a model that reads it)."""
        with self._lock:
            return self._client.outputs(
                list(session), prefix, list(history) if self.has_history else None
            )
