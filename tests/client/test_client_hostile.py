"""A server that answers badly (not HTTP, a body cut short,
JSON nested past any reader, a byte a second, a hundred headers and more, an endless line,
60 MB, outputs of the wrong shape) gives the client one SuggestError within its deadline, and
the app's call returns it as an error instead of ending the app. No TensorFlow."""

import json
import socket
import threading
import time

import pytest

import mtn_keras
from mtn_keras.client.remote import MAX_ANSWER_BYTES, redacted
from mtn_tui.model import SuggestError

METADATA = {
    "metadata": {
        "signature_def": {
            "signature_def": {
                "complete": {"outputs": {"suggestions": {}, "scores": {}, "sources": {}}},
            }
        }
    }
}
GOOD = {"outputs": {"suggestions": [["rome hotels"]], "scores": [[0.5]], "sources": [["log"]]}}


def http_answer(body: bytes, status="200 OK", headers=()) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", *headers]
    head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def json_answer(value) -> bytes:
    return http_answer(json.dumps(value).encode())


# What the server does on :predict, by name; each gets the connection's socket.
BAD = {
    "not-http": lambda c: c.sendall(b"SSH-2.0-OpenSSH\r\n\r\n"),
    "cut-short": lambda c: c.sendall(http_answer(b'{"outputs": {"sugg')[:-5]),
    "nested": lambda c: c.sendall(http_answer(b"[" * 100_000 + b"]" * 100_000)),
    "headers": lambda c: c.sendall(http_answer(b"{}", headers=[f"X-{i}: 1" for i in range(120)])),
    "long-line": lambda c: c.sendall(b"HTTP/1.1 200 OK\r\nX: " + b"a" * 200_000 + b"\r\n\r\n"),
    "huge": lambda c: c.sendall(http_answer(b" " * (MAX_ANSWER_BYTES + 1))),
    "no-scores": lambda c: c.sendall(json_answer({"outputs": {"suggestions": [["a"]]}})),
    "ragged": lambda c: c.sendall(
        json_answer({"outputs": {"suggestions": [["a", "b"]], "scores": [[1.0]]}})
    ),
    "not-numbers": lambda c: c.sendall(
        json_answer({"outputs": {"suggestions": [["a"]], "scores": [["x"]]}})
    ),
    "error-page": lambda c: c.sendall(http_answer(b"<html>oops</html>", "502 Bad Gateway")),
}


def trickle(connection):
    """A byte a second, for ever: the deadline must end the call."""
    for byte in http_answer(json.dumps(GOOD).encode()):
        connection.sendall(bytes([byte]))
        time.sleep(1)


BAD["trickle"] = trickle
# How many times the metadata answers 503, loading, before it answers, by model name.
LOADING = {"loading": 2, "never-loaded": 10**9}


@pytest.fixture(scope="module")
def hostile():
    """A server on 127.0.0.1 that answers the metadata well and :predict as its path's last
    model name says (http://127.0.0.1:PORT/v1/models/<case>)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve(connection):
        with connection:
            try:
                request = connection.recv(65536).decode("latin-1")
                while "\r\n\r\n" not in request:
                    request += connection.recv(65536).decode("latin-1")
                path = request.split(" ", 2)[1]
                case = path.split("/v1/models/")[1].split(":")[0].split("/")[0]
                loading = LOADING.get(case, 0)
                if path.endswith("/metadata") and loading:
                    LOADING[case] = loading - 1
                    body = b'{"error": "the model is loading: try again in a few seconds"}'
                    connection.sendall(http_answer(body, "503 Service Unavailable"))
                elif path.endswith("/metadata"):
                    connection.sendall(json_answer(METADATA))
                else:
                    BAD.get(case, lambda c: c.sendall(json_answer(GOOD)))(connection)
            except OSError:
                pass

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed at the end
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{port}/v1/models/"
    stop.set()
    listener.close()


def test_a_good_answer_is_read(hostile):
    assert mtn_keras.load(hostile + "good").suggest(["rome"])[0].text == "rome hotels"


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_bad_answer_is_one_suggest_error_within_the_deadline(hostile, case):
    model = mtn_keras.load(hostile + case, timeout=2)
    began = time.monotonic()
    with pytest.raises(mtn_keras.SuggestError) as raised:
        model.suggest(["rome"])
    assert time.monotonic() - began < 4, "the deadline is for the whole call"
    assert hostile + case in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("case", ["not-http", "nested", "ragged", "trickle"])
def test_the_apps_call_returns_the_error_and_the_app_stays_up(hostile, case):
    from mtn_tui.remote_model import RemoteModel
    from mtn_tui.scheduler import SUGGESTIONS, Call, Request

    app_model = RemoteModel(hostile + case, timeout=2)
    answer = Call(SUGGESTIONS, app_model, Request(("rome",), "ho", ())).run()
    assert isinstance(answer, SuggestError)


@pytest.mark.parametrize("model", [None, 123, ["default"], "", b"default"])
def test_what_is_no_model_name_is_refused_in_one_line(model):
    with pytest.raises(mtn_keras.SuggestError, match="give `default`"):
        mtn_keras.load(model)


@pytest.mark.parametrize(
    "url, said",
    [
        ("http://:8501/v1/models/x", "names no host"),
        ("http://localhost:port/v1/models/x", "the port is not a number"),
    ],
)
def test_an_address_without_a_host_or_a_port_number_is_one_suggest_error(url, said):
    with pytest.raises(mtn_keras.SuggestError, match=said):
        mtn_keras.load(url)


def test_a_password_in_the_address_is_never_printed(hostile):
    url = hostile.replace("http://", "http://ann:s3cret@") + "not-http"
    assert redacted(url) == hostile + "not-http"
    with pytest.raises(mtn_keras.SuggestError) as raised:
        mtn_keras.load(url, timeout=2).suggest(["rome"])
    assert "s3cret" not in str(raised.value) and "ann" not in str(raised.value)


def test_a_long_query_beside_a_long_session_is_cut_as_the_server_cuts_it(hostile):
    """The client sends at most the server's caps."""
    sent = []
    model = mtn_keras.load(hostile + "good")

    def run(name, inputs):
        sent.append(inputs)
        rows = len(inputs["session"])
        return {"suggestions": [["a"]] * rows, "scores": [[1.0]] * rows}

    model._runner.run = run
    assert len(model.suggest([["a" * 100_000], ["q"] * 5000])) == 2
    assert max(len(q) for row in sent[0]["session"] for q in row) == 512
    assert len(sent[0]["session"][1]) == 1000


def test_a_server_still_loading_is_waited_for_within_the_timeout(hostile):
    """`python -m mtn_keras.serve` answers 503 while its model loads: the client asks
    again, and says so in one line when the model is not ready within its timeout."""
    assert mtn_keras.load(hostile + "loading", timeout=5).suggest(["rome"])[0].text == (
        "rome hotels"
    )
    began = time.monotonic()
    with pytest.raises(mtn_keras.SuggestError, match="HTTP 503: the model is loading"):
        mtn_keras.load(hostile + "never-loaded", timeout=1.5)
    assert time.monotonic() - began < 3
