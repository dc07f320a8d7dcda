"""The app's model behind a running server (`python -m mtn_keras.serve` or TensorFlow Serving):
the answers of app/model.py's LocalModel through `mtn_keras.load(URL)`'s REST client (the same
Answer, read by the client), so that the app imports no TensorFlow and is ready as soon as the
server answers (docs/serving.md). The searcher's history goes to a server on this machine only,
unless asked."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from mtn_keras.client import load
from mtn_keras.client.remote import redacted
from mtn_keras.data.history import HISTORY_SIZE

from .model import ModelCalls

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


class RemoteModel(ModelCalls):
    """A model behind TensorFlow Serving's REST API at `url` (http://HOST:PORT/v1/models/NAME),
    answering as LocalModel does (ModelCalls). The history is sent with each call only to a
    server on this machine or with `send_history`; otherwise `notes` says so."""

    def __init__(
        self,
        url: str,
        progress: Callable[[str], None] | None = None,
        send_history: bool = False,
        timeout: float = TIMEOUT_S,
    ):
        (progress or (lambda step: None))(f"Asking {redacted(url)}…")
        began = time.perf_counter()
        self._client = load(url, timeout=timeout)
        self.start_seconds = {"server": time.perf_counter() - began}
        shown = urlsplit(self._client.where)  # the address checked, without its password
        model = shown.path.partition("/v1/models/")[2].split("/")[0]
        self.name = f"{model} on {shown.netloc}"
        reads = self._client.reads_history
        sends = send_history or on_this_machine(url)
        self.has_history, self.withheld_history = reads and sends, reads and not sends
        self.history_size = HISTORY_SIZE  # the graph keeps its own last ones of what it gets
        if self.withheld_history:
            self.notes = (
                f"Your history is not sent to {urlsplit(url).hostname}, another machine: "
                "suggestions without it (mtn-tui --send-history sends it).",
            )
        self._prepare_calls()
