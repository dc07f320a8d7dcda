"""The app's model backend: loads an exported SavedModel and calls its signatures for one session.

It uses only the signatures of docs/contracts.md, so any export that follows them works here.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = PROJECT_ROOT / "saved_models" / "default" / "savedmodel"
SIGNATURES = ("suggest", "complete", "session_attention")


class ModelError(Exception):
    """A model that cannot be loaded or called; the message says what went wrong and where."""


@dataclass
class Suggestion:
    """One suggested next query, its score and how much of it was copied from each source word."""

    text: str
    score: float
    copy_attention: np.ndarray  # [S, n], aligned with Suggestions.source_tokens


@dataclass
class Suggestions:
    """The suggestions for one session, best first, with the session's normalised words."""

    items: list[Suggestion]
    source_tokens: list[list[str]]  # [S][n], "" for padding


def resolve_model_path(path: str | Path | None) -> Path:
    """The SavedModel directory for `path`: the default model, or `path/savedmodel` if it exists."""
    path = Path(path).expanduser() if path else DEFAULT_MODEL
    return path / "savedmodel" if (path / "savedmodel").is_dir() else path


class Backend:
    """A loaded SavedModel; `suggest`, `complete` and `attention` take one session, oldest first."""

    def __init__(self, path: str | Path | None = None):
        self.path = resolve_model_path(path)
        self.name = self.path.parent.name if self.path.name == "savedmodel" else self.path.name
        # keep the loaded object: its signatures need its variables
        self._model, self.load_seconds = _load(self.path)
        self._warm_up()

    def _warm_up(self) -> None:
        """Call each signature once: TensorFlow's first call of a graph costs seconds, which
        would otherwise land on the user's first keystroke."""
        self.suggest(["a"])
        self.complete(["a"], "a")
        self.attention(["a"])

    def suggest(self, session: list[str]) -> Suggestions:
        """Suggestions for the query after `session`."""
        return self._suggestions(self._call("suggest", session=self._session(session)))

    def complete(self, session: list[str], prefix: str) -> Suggestions:
        """Suggestions for the query after `session` that start with the words of `prefix`."""
        import tensorflow as tf

        out = self._call("complete", session=self._session(session), prefix=tf.constant([prefix]))
        return self._suggestions(out)

    def attention(self, session: list[str]) -> np.ndarray:
        """The session encoder's attention, float32 [layers, heads, S, S]; rows attend.

        Only the queries the model kept are returned (it drops queries that are empty after
        normalising and pads short sessions), so S is at most the session's length.
        """
        out = self._call("session_attention", session=self._session(session))
        attention = out["attention"][0]
        if "queries" in out:
            kept = np.flatnonzero(out["queries"][0] != b"")
            attention = attention[:, :, kept][:, :, :, kept]
        return attention

    @staticmethod
    def _session(session: list[str]):
        import tensorflow as tf

        return tf.constant([list(session)], dtype=tf.string)

    def _call(self, name: str, **inputs) -> dict[str, np.ndarray]:
        try:
            outputs = self._model.signatures[name](**inputs)
            return {key: value.numpy() for key, value in outputs.items()}
        except Exception as error:  # TensorFlow raises many types; the app shows them all alike
            raise ModelError(f"The model at {self.path} failed in `{name}`: {error}") from error

    @staticmethod
    def _suggestions(out: dict[str, np.ndarray]) -> Suggestions:
        # Source rows of padding (all "") are dropped, so row i is the session's i-th kept query.
        kept = np.flatnonzero((out["source_tokens"][0] != b"").any(axis=-1))
        out = {**out, "source_tokens": out["source_tokens"][:, kept],
               "copy_attention": out["copy_attention"][:, :, kept]}
        items = [
            Suggestion(text.decode(), float(score), attention)
            for text, score, attention in zip(
                out["suggestions"][0], out["scores"][0], out["copy_attention"][0]
            )
            if text
        ]
        tokens = [[word.decode() for word in query] for query in out["source_tokens"][0]]
        return Suggestions(items, tokens)


def _cache_xla_compilations() -> None:
    """Keep the XLA-compiled search on disk (~/.cache/mtn-keras/xla), unless TF_XLA_FLAGS is
    set: the next start's warm-up then takes about 2 s instead of 5 s per signature."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mtn-keras" / "xla"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # no writable cache: compile at every start
    os.environ.setdefault("TF_XLA_FLAGS", f"--tf_xla_persistent_cache_directory={cache}")


def _load(path: Path):
    """The SavedModel at `path` with the app's signatures and the seconds it took to load.

    Raises a ModelError saying what is wrong and where instead.
    """
    if not path.exists():
        raise ModelError(f"No model at {path}: the path does not exist.")
    if not (path / "saved_model.pb").is_file():
        raise ModelError(f"{path} is not a SavedModel: it has no saved_model.pb.")
    _cache_xla_compilations()
    import tensorflow as tf

    start = time.perf_counter()
    try:
        loaded = tf.saved_model.load(str(path))
    except Exception as error:  # a corrupt file can fail in protobuf, IO or TensorFlow
        raise ModelError(f"Cannot load the SavedModel at {path}: {error}") from error
    missing = [name for name in SIGNATURES if name not in loaded.signatures]
    if missing:
        raise ModelError(
            f"The SavedModel at {path} lacks the signature(s) {', '.join(missing)}; "
            f"it has {', '.join(loaded.signatures) or 'none'}."
        )
    return loaded, time.perf_counter() - start
