"""The server's guard of its connections, so that no client can shut out the others: a request
must arrive whole (headers and body) within its read deadline, an idle connection is closed
after IDLE_SECONDS, one client address holds at most its budget of connections (more get
HTTP 429) and the server at most its total (more get HTTP 503), every refusal in JSON; the
process may open as many files as the system lets it, and each kind of error is logged at
most once a second, in one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send


READ_SECONDS = 10.0  # a request's headers and body, from its first byte
IDLE_SECONDS = 5  # a kept-alive connection without a new request (uvicorn takes whole seconds)
MAX_CONNECTIONS = 1024  # served at once by each door; never more than the files allow
MAX_CLIENT_CONNECTIONS = 64  # held at once by one client address
REFUSED_SECONDS = 1.0  # how long a refused connection may take to send the request it is told off
FILES_KEPT = 512  # open files left to the model, the logs and the other door
LOGGERS = ("uvicorn.error", "asyncio")


class Budget:
    """Places for connections (or calls): at most `total` at once, at most `per_client` of
    them from one client address; `take` says why not in one line, or None and holds one."""

    def __init__(self, total: int, per_client: int, what: str, option: str) -> None:
        self.total, self.per_client, self.what, self.option = total, per_client, what, option
        self.held: Counter[str] = Counter()

    def take(self, client: str) -> tuple[int, str] | None:
        """None and a place held for `client`, or (HTTP status, message) when it has none."""
        if self.held[client] >= self.per_client:
            return 429, (
                f"{client} holds {self.per_client} {self.what} at once, as many as one "
                f"address may ({self.option}): try again when one is done"
            )
        if self.held.total() >= self.total:
            return 503, f"the server holds as many {self.what} as it serves at once: try again"
        self.held[client] += 1
        return None

    def give_back(self, client: str) -> None:
        """The place `client` held is free again."""
        self.held[client] -= 1
        if self.held[client] <= 0:
            del self.held[client]


def refusal(status: int, message: str) -> ASGIApp:
    """An ASGI app that answers {"error": message} with HTTP `status` and closes."""
    body = json.dumps({"error": message}, ensure_ascii=True).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]

    async def refuse(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return refuse


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for reading each request (a client that
    stalls in its headers or its body, or never sends a byte, is cut off at the deadline)
    and a place in the server's Budget (a connection without one is refused in JSON)."""

    read_seconds = READ_SECONDS
    budget = Budget(
        MAX_CONNECTIONS, MAX_CLIENT_CONNECTIONS, "connections", "--max-client-connections"
    )

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._address = self.client[0] if self.client else ""
        refused = self.budget.take(self._address)
        self._holds = refused is None
        if refused is not None:  # answered as soon as its request comes, else closed soon
            self.app = refusal(*refused)
        self._arm(self.read_seconds if self._holds else REFUSED_SECONDS)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None:
            self._arm(self.read_seconds)
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._holds:
            self._holds = False
            self.budget.give_back(self._address)
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request that is not HTTP: answered in JSON, as every other error, and closed."""
        body = json.dumps({"error": f"not an HTTP/1.1 request this server reads: {msg}"})
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body.encode()),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def _arm(self, seconds: float) -> None:
        self._deadline = self.loop.call_later(seconds, self._too_slow)

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


def open_files_as_allowed() -> int:
    """Raise this process's limit of open files to the system's hard limit; the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connections_allowed(wanted: int) -> int:
    """`wanted` connections for each of the two doors, fewer if the open-file limit cannot
    hold both and FILES_KEPT besides (a full door then never stops the other accepting)."""
    limit = open_files_as_allowed()
    if limit == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, (limit - FILES_KEPT) // 2))


def guarded_config(
    app: ASGIApp,
    read_seconds: float = READ_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
    max_client_connections: int = MAX_CLIENT_CONNECTIONS,
    **options: Any,
) -> uvicorn.Config:
    """uvicorn's Config for `app` with the guards of this module (`read_seconds`: the
    deadline of each request's reading; the connection budgets, in total and per client
    address); `options` go to uvicorn.Config."""
    budget = Budget(
        connections_allowed(max_connections),
        max_client_connections,
        "connections",
        "--max-client-connections",
    )
    attributes = {"read_seconds": read_seconds, "budget": budget}
    protocol = type("Guarded", (GuardedH11Protocol,), attributes)
    config = uvicorn.Config(app, http=protocol, timeout_keep_alive=IDLE_SECONDS, **options)
    limited = OncePerSecond()  # after the Config, which sets uvicorn's logging up
    for name in LOGGERS:
        logging.getLogger(name).addFilter(limited)
    return config
