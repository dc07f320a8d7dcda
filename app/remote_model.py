"""The app's backend over a running server (`python -m mtn_keras.serve` or TensorFlow Serving):
the answers of app/model.py's Backend through `mtn_keras.load(URL)`'s REST client, so that the
app imports no TensorFlow and is ready as soon as the server answers (DESIGN.md, "Terminal
app"). The searcher's history goes to a server on this machine only, unless asked."""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import numpy as np

from mtn_keras.client import load
from mtn_keras.data.history import HISTORY_SIZE

from .model import ModelCalls, ModelError, SessionAttention

RANKS = {"suggestions": 2, "scores": 2, "copy_attention": 4, "source_tokens": 3}  # needed
TIMEOUT_S = 10.0  # a request's wait before the app says the server does not answer


def on_this_machine(url: str) -> bool:
    """Whether `url`'s host is a loopback address (or `localhost`): this machine only."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RemoteBackend(ModelCalls):
    """A model behind TensorFlow Serving's REST API at `url` (http://HOST:PORT/v1/models/NAME),
    answering as Backend does (ModelCalls). The history is sent with each call only to a
    server on this machine or with `send_history`; otherwise `notes` says so."""

    def __init__(
        self,
        url: str,
        progress: Callable[[str], None] | None = None,
        send_history: bool = False,
        timeout: float = TIMEOUT_S,
    ):
        (progress or (lambda step: None))(f"Asking {url}…")
        began = time.perf_counter()
        self._client = load(url, timeout=timeout)
        self.start_seconds = {"server": time.perf_counter() - began}
        self.url = url
        found = re.search(r"/v1/models/([^/:?#]+)", url)
        self.name = f"{found.group(1)} on {urlsplit(url).netloc}"
        reads = self._client.reads_history
        sends = send_history or on_this_machine(url)
        self.has_history, self.withheld_history = reads and sends, reads and not sends
        self.history_size = HISTORY_SIZE  # the graph keeps its own last ones of what it gets
        if self.withheld_history:
            self.notes = (
                f"Your history is not sent to {urlsplit(url).hostname}, another machine: "
                "suggestions without it (mtn-tui --send-history sends it).",
            )
        self._attention_in_suggest = "session_attention" in self._client.signatures["complete"]
        self._prepare_calls()

    def _outputs(
        self, session: list[str], prefix: str, history: tuple[str, ...]
    ) -> dict[str, np.ndarray]:
        """The server's outputs for `session`, `prefix` and `history` (sent only when the model
        reads it and it may go there), as Backend's: numpy arrays, text as bytes."""
        sent = list(history) if self.has_history else None
        return self._readable(self._client.outputs(list(session), prefix, sent))

    def _readable(self, outputs: dict) -> dict[str, np.ndarray]:
        """`outputs` as numpy arrays, text as UTF-8 bytes; a ModelError naming the server when
        they are not the suggestion outputs of one session."""
        try:
            arrays = {key: np.asarray(value) for key, value in outputs.items()}
        except ValueError as error:  # ragged lists
            raise self._garbled(str(error)) from None
        for key, rank in RANKS.items():
            if key not in arrays:
                raise self._garbled(f"no `{key}`")
            if arrays[key].ndim != rank or len(arrays[key]) != 1:
                raise self._garbled(f"`{key}` has the shape {arrays[key].shape}")
        return {key: _as_tensorflow_gives(value) for key, value in arrays.items()}

    def _garbled(self, what: str) -> ModelError:
        return ModelError(f"{self.url} answered what the app cannot read: {what}")

    def _own_attention(self, session: list[str]) -> SessionAttention:
        """ModelCalls' attention, a ModelError naming the server when it cannot be read."""
        try:
            found = super()._own_attention(session)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise self._garbled(f"attention: {error!r}") from None
        if found.weights.ndim != 4:
            raise self._garbled(f"attention has the shape {found.weights.shape}")
        return found


def _as_tensorflow_gives(value: np.ndarray) -> np.ndarray:
    """An output read from JSON as TensorFlow answers it: text as UTF-8 bytes, numbers as
    float32 (JSON's are float64)."""
    if value.dtype.kind == "U":
        return np.char.encode(value, "utf-8")
    return value.astype(np.float32) if value.dtype.kind in "fi" else value
