"""The app's model: an exported SavedModel loaded in this process and called for one session
through the client (mtn_keras.client), as RemoteModel calls a server.

It uses only the signatures of docs/contracts.md, so any export that follows them works here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.base.xla_setup import compiled_before, mark_compiled
from mtn_keras.client import Answer, Attention
from mtn_keras.client.local import SavedModel
from mtn_keras.client.suggester import Suggester
from mtn_keras.data.history import HISTORY_SIZE
from mtn_keras.data.text import normalise
from mtn_keras.serving.savedmodel import (
    APP_SIGNATURES,
    SuggestError,
    bundled_model,
    check,
    model_name,
    resolve,
)

DEFAULT_MODEL = bundled_model()

__all__ = ["DEFAULT_MODEL", "Answer", "Attention", "LocalModel", "ModelCalls", "SuggestError"]


def ignored_reasons(session: Sequence[str], positions: Sequence[int]) -> dict[int, str]:
    """Why each session query the model did not use (not at `positions`) was left out, by
    0-based position."""
    window = len(positions)
    return {
        index: "no words" if not normalise(query) else f"outside the model's window of {window}"
        for index, query in enumerate(session)
        if index not in positions
    }


def read_as(attention: Attention, session: list[str] | tuple[str, ...]) -> dict[int, str]:
    """The session queries that the model read through a correction of a slip, by 0-based
    position: the model's reading."""
    return {
        index: reading
        for index, reading in zip(attention.positions, attention.queries)
        if reading != normalise(session[index])
    }


def resolve_model_path(path: str | Path | None) -> Path:
    """The SavedModel directory for `path`: the default model, or `path/savedmodel` if it exists."""
    return resolve(path) if path else DEFAULT_MODEL


class ModelCalls:
    """What the app asks of a model, whatever runs it: `suggestions` and `attention` for one
    session, oldest first, with the searcher's earlier queries (`history`, oldest first, as
    the store hands them: the graph keeps its own last ones) for a model that reads them. A
    subclass sets `_client` (a Suggester of mtn_keras.client), `name`, `has_history` and
    `history_size`; the client's Answer and Attention are what the screens show."""

    _client: Suggester
    name: str
    has_history: bool  # whether the model reads the history, and the app sends it
    history_size: int
    start_seconds: dict[str, float]  # what starting took, step by step
    notes: tuple[str, ...] = ()  # what the person should hear once the model is ready
    withheld_history = False  # whether the model reads history that the app does not send

    def _prepare_calls(self) -> None:
        self._lock = threading.RLock()  # one model call at a time; the workers share it
        # ((session, prefix, history), Answer) of the latest call
        self._last: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], Answer] | None = None

    @property
    def explicit_shown(self) -> bool:
        """Show sexually explicit suggestions (mtn-tui --explicit)? Whatever the model or
        server answers, the client shows none unless asked, and never one that seeks abuse
        material."""
        return self._client.explicit_shown

    @explicit_shown.setter
    def explicit_shown(self, shown: bool) -> None:
        with self._lock:
            self._client.explicit_shown, self._last = shown, None

    def suggestions(
        self, session: list[str], prefix: str = "", history: tuple[str, ...] = ()
    ) -> Answer:
        """Suggestions for the query after `session` that start with the words of `prefix`
        (none typed: any next query), reading `history` if the model can, with what the
        model read (the Answer's details). The latest answer is kept: the attention of a
        session reads it (the app asks for both after each query)."""
        asked = (tuple(session), prefix, tuple(history) if self.has_history else ())
        with self._lock:
            if self._last is None or self._last[0] != asked:
                sent = list(asked[2]) if self.has_history else None
                answer = self._client.complete(list(session), prefix, sent, details=True)
                # one session: one Answer, with the details that hold its attention
                self._last = (asked, cast(Answer, answer))
            return self._last[1]

    def attention(self, session: list[str], history: tuple[str, ...] = ()) -> Attention:
        """The session encoder's attention over the queries the model kept, padding removed:
        from the suggestions' answer when the model gives it there."""
        if self._client.answers_attention:
            return cast(Attention, self.suggestions(session, "", history).attention)
        with self._lock:
            return cast(Attention, self._client.attention(list(session)))


class LocalModel(ModelCalls):
    """A SavedModel loaded in this process through the client (ModelCalls says what it
    answers).

    `progress` hears each start-up step ("Compiling complete…") as it begins;
    `prepare_tensorflow(tf)` runs once TensorFlow is imported, before the first call (the entry
    point's process-wide settings: the model sets none itself).
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
        runner = SavedModel(self.path, APP_SIGNATURES)
        self._client = Suggester(runner, str(self.path))
        self.load_seconds = self.start_seconds["reading"] = runner.load_seconds
        # A model with the history signatures reads the searcher's earlier queries too.
        self.has_history = self._client.reads_history
        # the earlier queries a history model keeps; an export.json that does not say means
        # the graph's own HISTORY_SIZE
        self.history_size = int(self._client.settings.get("history_size", HISTORY_SIZE))
        self._prepare_calls()
        self._warm_up(progress)

    def _warm_up(self, progress: Callable[[str], None]) -> None:
        """Call the one suggestion signature once: TensorFlow's first call of a graph compiles
        it, which would otherwise land on the user's first keystroke."""
        steps: list[tuple[str, Callable[[], object]]] = [
            (self._client.answering, lambda: self.suggestions(["a"], "a"))
        ]
        if not self._client.answers_attention:  # an older export: its own attention graph
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
