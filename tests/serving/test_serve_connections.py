"""One local client cannot shut out the others. Connections that stall in a
request's headers or body, or never send a byte, are closed at the read deadline; an honest
request beside hundreds of them is answered at once; a flood of one error is one log line a
second. The server's own guard (serving/connections.py) around a trivial app: no model."""

import logging
import socket
import threading
import time
import urllib.request

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from mtn_keras.serving.connections import MAX_CLIENT_CONNECTIONS, OncePerSecond, guarded_config

READ_SECONDS = 1.0


@pytest.fixture(scope="module")
def server():
    app = Starlette(routes=[Route("/ping", lambda request: JSONResponse({"ok": True}))])
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = guarded_config(app, READ_SECONDS, log_level="critical")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.05)
    yield port
    running.should_exit = True
    thread.join(10)


def stalled(port, count, what):
    """`count` connections from another client address (127.0.0.2) that send `what` and then
    nothing."""
    found = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        conn.sendall(what)
        found.append(conn)
    return found


def closed_by_the_server(conn, within):
    """Whether the server closes `conn` within `within` seconds (after any answer)."""
    until = time.monotonic() + within
    try:
        while time.monotonic() < until:
            conn.settimeout(max(until - time.monotonic(), 0.01))
            if conn.recv(65536) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def test_stalled_clients_are_cut_off_and_an_honest_one_is_answered(server):
    half = MAX_CLIENT_CONNECTIONS  # three times its budget: the rest refused
    conns = stalled(server, half, b"GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    conns += stalled(server, half, b"POST /ping HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\n{")
    conns += stalled(server, half, b"")
    began = time.monotonic()
    with urllib.request.urlopen(f"http://127.0.0.1:{server}/ping", timeout=5) as answer:
        assert answer.status == 200
    assert time.monotonic() - began < 2
    assert all(closed_by_the_server(conn, READ_SECONDS + 3) for conn in conns)
    for conn in conns:
        conn.close()


def test_a_flood_of_one_error_is_one_line_a_second(caplog):
    logger = logging.getLogger("flood-test")
    logger.addFilter(OncePerSecond())
    with caplog.at_level(logging.ERROR, logger="flood-test"):
        for _ in range(1000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.exception("socket.accept() out of system resource")
        logger.error("another kind")
    assert len(caplog.records) == 2 and caplog.records[0].exc_info is None
    assert "Too many open files" in caplog.records[0].getMessage()
