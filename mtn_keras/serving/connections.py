"""The server's guard of its connections, so that no client can shut out the others: a request
must arrive whole (headers and body) within READ_SECONDS of its first byte or of the
connection's start, an idle connection is closed after IDLE_SECONDS, at most MAX_CONNECTIONS
are served at once (more get HTTP 503 at once), the process may open as many files as the
system lets it, and each kind of error is logged at most once a second, in one line.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from starlette.types import ASGIApp


READ_SECONDS = 10.0  # a request's headers and body, from its first byte
IDLE_SECONDS = 5  # a kept-alive connection without a new request (uvicorn takes whole seconds)
MAX_CONNECTIONS = 256  # served at once; a stalled one holds a place for READ_SECONDS at most
LOGGERS = ("uvicorn.error", "asyncio")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for reading each request: a client that
    stalls in its headers or its body, or never sends a byte, is cut off at the deadline."""

    read_seconds = READ_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None:
            self._arm()
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.read_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        """The request did not arrive whole in time: the connection is closed."""
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class OncePerSecond(logging.Filter):
    """Lets a log record through when no record of its kind (logger, message template) came in
    the last second, without its traceback: a flood of one error is one line a second."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[tuple[str, str], float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key, now = (record.name, str(record.msg)), time.monotonic()
        if now - self.last.get(key, -1.0) < 1.0:
            return False
        self.last[key] = now
        if record.exc_info:
            record.msg = f"{record.getMessage()}: {record.exc_info[1]!r}"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def open_files_as_allowed() -> None:
    """Raise this process's limit of open files to the system's hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def guarded_config(
    app: ASGIApp, read_seconds: float = READ_SECONDS, **options: Any
) -> uvicorn.Config:
    """uvicorn's Config for `app` with the guards of this module (`read_seconds`: the
    deadline of each request's reading); `options` go to uvicorn.Config."""
    open_files_as_allowed()
    protocol = type("Guarded", (GuardedH11Protocol,), {"read_seconds": read_seconds})
    config = uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=IDLE_SECONDS,
        limit_concurrency=MAX_CONNECTIONS,
        **options,
    )
    limited = OncePerSecond()  # after the Config, which sets uvicorn's logging up
    for name in LOGGERS:
        logging.getLogger(name).addFilter(limited)
    return config
