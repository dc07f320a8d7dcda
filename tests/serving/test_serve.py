"""`python -m mtn_keras.serve`: TensorFlow Serving's REST API over the exported SavedModel, its
requests batched across clients, every bad request answered with {"error": ...} and HTTP 400."""

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from mtn_keras.serving.requests import BadRequest, parse_request
from mtn_keras.serving.rest import response

SIGNATURES = {
    "suggest": ["session"],
    "complete": ["session", "prefix"],
    "serving_default": ["session"],
}
SESSIONS = [["cheap flights", "hotel deals"], ["used cars"]]


def test_row_and_columnar_requests_read_alike():
    row = json.dumps(
        {
            "signature_name": "complete",
            "instances": [
                {"session": SESSIONS[0], "prefix": "ch"},
                {"session": SESSIONS[1], "prefix": ""},
            ],
        }
    )
    columnar = json.dumps(
        {"signature_name": "complete", "inputs": {"session": SESSIONS, "prefix": ["ch", ""]}}
    )
    assert parse_request(row, SIGNATURES, 10)[:2] == parse_request(columnar, SIGNATURES, 10)[:2]
    none = parse_request(json.dumps({"signature_name": "complete", "instances": []}), SIGNATURES, 1)
    assert none == ("complete", {"session": [], "prefix": []}, "row")
    bare = parse_request(json.dumps({"instances": SESSIONS}), SIGNATURES, 10)
    assert bare == ("serving_default", {"session": SESSIONS}, "row")
    b64 = {"b64": "dXNlZCBjYXJz"}  # "used cars"
    assert parse_request(json.dumps({"inputs": [[b64]]}), SIGNATURES, 10)[1] == {
        "session": [["used cars"]]
    }


@pytest.mark.parametrize(
    "body, message",
    [
        ("{not json", "not JSON"),
        ("[1]", "JSON object"),
        ('{"signature_name": "nope", "instances": []}', "no signature 'nope'"),
        ('{"instances": [], "inputs": []}', "exactly one of"),
        ('{"instances": [[1, 2]]}', "must be a string"),
        ('{"instances": ["used cars"]}', "must be a list"),
        ('{"signature_name": "complete", "inputs": {"session": [["a"]]}}', "missing: prefix"),
        ('{"signature_name": "complete", "inputs": {"session": [["a"]], "prefix": []}}', "one row"),
        ('{"instances": [{"session": ["a"], "user": "x"}]}', "unknown: .user."),
        ('{"inputs": [["a"]] }', None),
    ],
)
def test_bad_requests_are_named(body, message):
    if message is None:
        parse_request(body, SIGNATURES, 10)
        return
    with pytest.raises(BadRequest, match=message):
        parse_request(body, SIGNATURES, 10)


def test_too_many_sessions_are_refused():
    body = json.dumps({"inputs": [["used cars"]] * 11})
    with pytest.raises(BadRequest, match="11 sessions in one request; at most 10"):
        parse_request(body, SIGNATURES, 10)


def test_responses_take_the_requests_form():
    outputs = {"scores": np.array([[-1.0, -np.inf]]), "suggestions": np.array([[b"a", b""]])}
    assert response(outputs, "row") == {
        "predictions": [{"scores": [-1.0, -np.inf], "suggestions": ["a", ""]}]
    }
    assert response(outputs, "columnar") == {
        "outputs": {"scores": [[-1.0, -np.inf]], "suggestions": [["a", ""]]}
    }
    assert response({"x": np.array([1.0])}, "row") == {"predictions": [1.0]}


def test_help_says_what_it_serves_and_where():
    done = subprocess.run(
        [sys.executable, "-m", "mtn_keras.serve", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    for words in ("127.0.0.1", ":predict", "instances", "/metadata", "--max-sessions", "400"):
        assert words in done.stdout, words


@pytest.fixture(scope="module")
def client(exported):
    import tensorflow as tf
    from starlette.testclient import TestClient

    from mtn_keras.serving.rest import make_app

    # 50 ms for others to join a call: the threads of one test reach the server within it.
    app = make_app(tf.saved_model.load(str(exported)), exported, "tiny", 0.05, max_sessions=100)
    with TestClient(app) as client:
        yield client


def predict(client, body):
    return client.post("/v1/models/tiny:predict", content=json.dumps(body))


@pytest.mark.slow
def test_predict_answers_as_the_signature_does(client, exported):
    import tensorflow as tf

    loaded = tf.saved_model.load(str(exported))
    want = loaded.signatures["complete"](
        session=tf.constant([["", "used cars"], ["cheap flights", "hotel deals"]]),
        prefix=tf.constant(["", "ch"]),
    )
    row = predict(
        client,
        {
            "signature_name": "complete",
            "instances": [
                {"session": ["used cars"], "prefix": ""},
                {"session": SESSIONS[0], "prefix": "ch"},
            ],
        },
    )
    assert row.status_code == 200, row.text
    got = row.json()["predictions"]
    for i in range(2):
        assert got[i]["suggestions"] == want["suggestions"].numpy()[i].astype(str).tolist()
        np.testing.assert_allclose(got[i]["scores"], want["scores"].numpy()[i], atol=1e-5)
    columnar = predict(
        client,
        {
            "signature_name": "complete",
            "inputs": {"session": [["", "used cars"], SESSIONS[0]], "prefix": ["", "ch"]},
        },
    )
    assert columnar.json()["outputs"]["suggestions"] == [g["suggestions"] for g in got]


@pytest.mark.slow
def test_concurrent_clients_share_model_calls_and_get_their_own_answers(client, monkeypatch):
    sessions = [["used cars"], ["cheap flights"], ["hotel deals", "used cars online"]]
    alone = [predict(client, {"instances": [s]}).json()["predictions"][0] for s in sessions]
    batcher = client.app.state.batchers["serving_default"]
    sizes, call = [], batcher.call
    monkeypatch.setattr(
        batcher, "call", lambda requests: sizes.append(len(requests)) or call(requests)
    )
    answers = [None] * 9

    def ask(i):
        body = {"instances": [sessions[i % 3]]}
        answers[i] = predict(client, body).json()["predictions"][0]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, answer in enumerate(answers):
        # Each its own slots too (padding, then its queries), not those of the widest.
        for key in ("suggestions", "sources", "source_tokens", "queries"):
            assert answer[key] == alone[i % 3][key], key
        np.testing.assert_allclose(answer["scores"], alone[i % 3]["scores"], atol=1e-5)
    assert sum(sizes) == 9 and max(sizes) > 1, sizes  # requests shared model calls


@pytest.mark.slow
def test_status_metadata_and_every_bad_request(client):
    assert client.get("/v1/models/tiny").json()["model_version_status"][0]["state"] == ("AVAILABLE")
    signatures = client.get("/v1/models/tiny/metadata").json()["metadata"]["signature_def"]
    suggest = signatures["signature_def"]["suggest"]
    assert suggest["inputs"]["session"]["dtype"] == "DT_STRING"
    assert client.get("/v1/models/other").status_code == 404
    # No words: k empty suggestions scored -inf, written -Infinity as TensorFlow Serving does.
    empty = predict(client, {"instances": [["!!"]]})
    assert empty.status_code == 200 and "-Infinity" in empty.text
    assert np.isneginf(json.loads(empty.text)["predictions"][0]["scores"]).all()
    assert predict(client, {"instances": []}).json() == {"predictions": []}
    assert predict(client, {"instances": [["used cars"]]}).status_code == 200  # still serving
    for body in (
        "{not json",
        json.dumps({"signature_name": "nope", "instances": [["a"]]}),
        json.dumps({"inputs": [["a"]] * 10_000}),
        json.dumps({"inputs": {"session": [[["a"]]]}}),
    ):
        answer = client.post("/v1/models/tiny:predict", content=body)
        assert answer.status_code == 400 and set(answer.json()) == {"error"}, answer.text
        assert "Traceback" not in answer.text


async def test_a_client_that_hangs_up_leaves_the_batcher_serving():
    """A request cancelled while its model call runs (the client went away) is dropped; the
    requests after it are answered."""
    import asyncio

    import tensorflow as tf

    from mtn_keras.serving.batching import Batcher

    started = threading.Event()

    def slow(session):
        started.set()
        return {"words": tf.strings.length(session[:, -1])}

    batcher = Batcher(slow, ["session"], wait=0.001, max_batch=64)
    gone = asyncio.create_task(batcher.answer({"session": [["a b"]]}))
    while not started.is_set():
        await asyncio.sleep(0.001)
    gone.cancel()
    answer = await asyncio.wait_for(batcher.answer({"session": [["abc"]]}), 30)
    assert answer["words"].tolist() == [3]
    batcher.task.cancel()


@pytest.mark.slow
def test_limits_and_versions_answer_in_one_line(client):
    from mtn_keras.serving.rest import MAX_BODY_MB

    huge = b" " * (MAX_BODY_MB * 2**20 + 1)
    answer = client.post("/v1/models/tiny:predict", content=huge)
    assert answer.status_code == 413 and "--max-body-mb" in answer.json()["error"]
    long = predict(client, {"instances": [["a" * 513]]})
    assert long.status_code == 400 and "at most 512" in long.json()["error"]
    for version in ("999", "abc", "-1", "2"):
        for url in (
            f"/v1/models/tiny/versions/{version}",
            f"/v1/models/tiny/versions/{version}/metadata",
        ):
            got = client.get(url)
            assert got.status_code == 404 and "Servable not found" in got.json()["error"]
        post = client.post(f"/v1/models/tiny/versions/{version}:predict", content="{}")
        assert post.status_code == 404 and f"Specific(tiny, {version})" in post.json()["error"]
    assert client.get("/v1/models/tiny/versions/1/metadata").status_code == 200
    one = client.post("/v1/models/tiny/versions/1:predict", json={"instances": [["used cars"]]})
    assert one.status_code == 200, one.text
    # a path TensorFlow Serving has and this server has not, in JSON too
    label = client.get("/v1/models/tiny/labels/stable")
    assert label.status_code == 404 and "no such path" in label.json()["error"]
    string = predict(client, {"inputs": {"session": "used cars"}})
    assert string.status_code == 400 and "not a string" in string.json()["error"]


@pytest.mark.parametrize(
    "typed, words",
    [
        ("--port 70000", "from 1 to 65535"),
        ("--port 0", "from 1 to 65535"),
        ("--batch-wait-ms inf", "from 0 to 1000"),
        ("--max-body-mb nan", "--max-body-mb"),
        ("--host no.such.host.invalid", "--host no.such.host.invalid"),
        # origins that a browser never sends
        ("--allow-origin null", "is no web origin"),
        ("--allow-origin notaurl", "is no web origin"),
        ("--allow-origin https://good.example/", "'https://good.example', without a path"),
    ],
)
def test_start_up_options_are_checked_before_the_model_loads(typed, words):
    """`typed`: the options as typed on the command line (no value holds a space)."""
    done = subprocess.run(
        [sys.executable, "-m", "mtn_keras.serve", *typed.split()], capture_output=True, text=True
    )
    # argparse's usage, then one line; never a traceback
    assert done.returncode == 2 and words in done.stderr.strip().splitlines()[-1], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_sigterm_stops_within_the_grace_whatever_a_client_does(exported):
    import signal
    import socket
    import time

    from mtn_keras.serve import GRACE_S

    ports = []
    for _ in range(2):  # REST's, gRPC's: both stop within the grace
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    port = ports[0]
    server = subprocess.Popen(
        [sys.executable, "-m", "mtn_keras.serve", "--model", str(exported), "--name", "tiny"]
        + ["--port", str(port), "--grpc-port", str(ports[1])],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(600):  # it loads and compiles first
            try:
                half = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        head = "POST /v1/models/tiny:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        half.sendall(head.encode() + b'{"instances"')  # 12 of 100 bytes, then nothing
        time.sleep(0.5)
        began = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(GRACE_S + 15)
        assert time.monotonic() - began < GRACE_S + 5
        assert "Traceback" not in server.stderr.read()
        half.close()
    finally:
        server.kill()


def test_a_nul_byte_is_a_separator_as_prepare_reads_it(client):
    """The text "wea\\0ther" is read as "wea ther" over REST, as in process."""
    answer = predict(client, {"signature_name": "suggest", "inputs": {"session": [["wea\0ther"]]}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["outputs"]["queries"][0][-1] == "wea ther"
