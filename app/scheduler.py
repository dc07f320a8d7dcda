"""One suggestion request at a time, for what is on screen now: typing never waits on the model
and never piles calls up behind it. Plain Python: the app gives it a worker to start and a
screen to show on."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .model import Backend, ModelError, Suggestions


class Request(NamedTuple):
    """What the suggestions on screen should answer: the session, the typed prefix and the
    searcher's earlier queries."""

    session: tuple[str, ...]
    prefix: str
    history: tuple[str, ...]


def call_model(backend: Backend, request: Request) -> Suggestions | ModelError:
    """The model's answer to `request`, or the error that says why there is none."""
    try:
        return backend.suggestions(list(request.session), request.prefix, request.history)
    except ModelError as error:
        return error


class SuggestionScheduler:
    """At most one call in flight; when it returns, the newest wanted request is asked for.

    `wanted()` says what the screen should answer now; `start(backend, request)` begins the
    call in a worker, whose answer comes back to `answered`; `show(request, answer)` puts an
    answer on screen (None: nothing to ask, no session and nothing typed).
    """

    def __init__(
        self,
        wanted: Callable[[], Request],
        start: Callable[[Backend, Request], None],
        show: Callable[[Request, Suggestions | ModelError | None], None],
    ):
        self._wanted, self._start, self._show = wanted, start, show
        self.backend: Backend | None = None
        self.asking: tuple[Backend, Request] | None = None  # the call in flight
        self.shown: Request | None = None  # the request whose answer is on screen

    def use(self, backend: Backend) -> None:
        """Answer with `backend` from now on, asking again for what is on screen."""
        self.backend = backend
        self.shown = None
        self.request()

    def request(self) -> None:
        """Ask for the wanted suggestions, unless they are on screen or on the way."""
        if self.backend is None or self.asking is not None:
            return  # no model yet, or the call in flight asks again when it returns
        wanted = self._wanted()
        if wanted == self.shown:
            return
        if not wanted.session and not wanted.prefix:  # typed words are completed from the first key
            self.shown = wanted
            self._show(wanted, None)
            return
        self.asking = (self.backend, wanted)
        self._start(self.backend, wanted)

    def answered(
        self, backend: Backend, request: Request, answer: Suggestions | ModelError
    ) -> None:
        """Show the answer of the call in flight if it is still wanted, then ask for what is."""
        self.asking = None
        if backend is self.backend and request == self._wanted():
            self.shown = request
            self._show(request, answer)
        self.request()  # typing went on meanwhile: ask for what is there now
