"""One client cannot harm another. A bad request is refused alone, a failed model
call is retried request by request, a large request is served a share at a time beside the
small ones, and a request whose client has gone is dropped before it is computed."""

import asyncio
import json

import pytest

from mtn_keras.serving.batching import SHARE, Batcher
from mtn_keras.serving.requests import MAX_QUERY_CHARS, BadRequest, parse_request

SIGNATURES = {
    "suggest": ["session"],
    "complete": ["session", "prefix"],
    "suggest_with_history": ["session", "history"],
}


@pytest.mark.parametrize(
    "request_",
    [
        {"signature_name": "suggest", "instances": [{"session": ["x\ud800"]}]},
        {"signature_name": "complete", "instances": [{"session": [], "prefix": "\udfff"}]},
        {
            "signature_name": "suggest_with_history",
            "inputs": {"session": [[]], "history": [["a", "\ud800b"]]},
        },
    ],
)
def test_a_lone_surrogate_is_refused_before_batching(request_):
    body = json.dumps(request_)  # json writes the surrogate as \ud800, as a hostile client
    with pytest.raises(BadRequest, match="lone surrogate"):
        parse_request(body, SIGNATURES, 10)


@pytest.mark.parametrize(
    "body",
    [
        '{"signature_name": "suggest", "instances": [{"session": [], "\\ud800": 1}]}',
        '{"signature_name": "suggest", "inputs": {"session": [[]], "\\ud800": 1}}',
        '{"signature_name": "\\ud800\\n", "instances": []}',
    ],
)
def test_unknown_names_are_named_safely(body):
    from mtn_keras.serving.rest import error

    with pytest.raises(BadRequest) as raised:
        parse_request(body, SIGNATURES, 10)
    message = str(raised.value)
    assert "\\ud800" in message and "\n" not in message
    assert json.loads(error(message).body)["error"] == message


@pytest.mark.parametrize(
    "body, words",
    [
        ('{"signature_name": ["suggest"], "instances": []}', '"signature_name" must be a string'),
        ('{"instances": [[{"b64": 5}]]}', "b64 must be a string of base64"),
        ('{"instances": [[' + "9" * 5000 + "]]}", "must be a string, not a number"),
        (json.dumps({"instances": [["a" * (MAX_QUERY_CHARS + 1)]]}), "at most 512"),
        (json.dumps({"instances": [["a"] * 1001]}), "1001 queries; at most 1000"),
    ],
)
def test_odd_values_get_one_plain_line(body, words):
    with pytest.raises(BadRequest, match=words) as raised:
        parse_request(body, {"serving_default": ["session"]}, 10)
    assert "sys." not in str(raised.value) and "unhashable" not in str(raised.value)


def counting(calls, poison=None):
    """A stand-in signature: the length of each session's last query; fails a whole call
    that holds `poison`, as one bad tensor fails TensorFlow's call."""
    import tensorflow as tf

    def function(session):
        calls.append(session.shape[0])
        queries = [query for row in session.numpy().astype(str).tolist() for query in row]
        if poison in queries:
            raise ValueError(f"bad input {poison}")
        return {"scores": tf.strings.length(session[:, -1])}

    return function


async def test_a_failing_call_is_retried_request_by_request():
    calls = []
    batcher = Batcher(counting(calls, poison="bad"), ["session"], wait=0.05, max_batch=64)
    answers = await asyncio.gather(
        batcher.answer({"session": [["abc"]]}),
        batcher.answer({"session": [["bad"]]}),
        batcher.answer({"session": [["de"], ["fghi"]]}),
        return_exceptions=True,
    )
    assert answers[0]["scores"].tolist() == [3]
    assert isinstance(answers[1], ValueError)
    assert answers[2]["scores"].tolist() == [2, 4]
    assert calls[0] == 4 and len(calls) == 4, calls  # together, then each alone
    batcher.task.cancel()


async def test_a_large_request_does_not_hold_a_small_one_behind_it():
    calls, finished = [], []
    batcher = Batcher(counting(calls), ["session"], wait=0.001, max_batch=64)

    async def ask(name, sessions):
        answer = await batcher.answer({"session": sessions})
        finished.append(name)
        return answer

    large = asyncio.create_task(ask("large", [["abc"]] * 200))
    while not calls:
        await asyncio.sleep(0.001)
    small = await ask("small", [["ab"]])
    assert small["scores"].tolist() == [2]
    assert finished == ["small"] and sum(calls) < 3 * 16, calls  # a share or two before it
    assert (await large)["scores"].tolist() == [3] * 200
    assert max(calls) <= 16, calls  # a share of 8, then padding to a batch size filled
    batcher.task.cancel()


async def test_a_request_whose_client_has_gone_is_not_computed():
    calls = []
    batcher = Batcher(counting(calls), ["session"], wait=0.001, max_batch=64)
    gone = asyncio.create_task(batcher.answer({"session": [["abc"]] * 500}))
    while not calls:
        await asyncio.sleep(0.001)
    gone.cancel()
    answer = await batcher.answer({"session": [["ab"]]})
    assert answer["scores"].tolist() == [2]
    assert sum(calls) <= 2 * 2 * SHARE, calls  # not the 500 sessions
    batcher.task.cancel()


def post_scope(path):
    """The ASGI scope of a JSON POST to `path`, as uvicorn makes it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "server": ("127.0.0.1", 8501),
        "client": ("127.0.0.1", 40000),
    }


async def test_a_call_cut_off_by_the_servers_stop_is_answered_503_json():
    """A second Ctrl-C (or the grace's end) cancels the request's task while its model call
    runs, as uvicorn does: the client reads {"error"} with HTTP 503, not a 500 traceback."""
    import threading

    import tensorflow as tf
    from starlette.applications import Starlette

    from mtn_keras.serving.metrics import Metrics
    from mtn_keras.serving.rest import ServedModel, stopping_answered

    started, release = threading.Event(), threading.Event()

    def long_call(session):
        started.set()
        release.wait()
        return {"scores": tf.strings.length(session[:, -1])}

    served = ServedModel.__new__(ServedModel)  # a stand-in signature instead of a SavedModel
    served.name, served.max_sessions, served.max_body = "tiny", 64, 2**20
    served.signatures = {"serving_default": ["session"]}
    served.outputs, served.timeout = {"serving_default": ["scores"]}, None
    served.metrics, served.state = Metrics("tiny"), "AVAILABLE"
    batcher = Batcher(long_call, ["session"], wait=0.001, max_batch=64)
    served.batchers = {"serving_default": batcher}
    app = stopping_answered(Starlette(routes=served.routes()))
    body = json.dumps({"instances": [["cheap flights"]]}).encode()
    arrived, never = [{"type": "http.request", "body": body, "more_body": False}], asyncio.Event()

    async def receive():
        if arrived:
            return arrived.pop()
        await never.wait()  # the client stays connected

    sent = []

    async def send(message):
        sent.append(message)

    request = asyncio.create_task(app(post_scope("/v1/models/tiny:predict"), receive, send))
    await asyncio.to_thread(started.wait)  # the model call runs
    request.cancel()
    await request
    release.set()
    assert sent[0]["status"] == 503
    assert (b"content-type", b"application/json") in sent[0]["headers"]
    assert json.loads(sent[1]["body"]) == {"error": "the server is stopping: try again"}
    batcher.task.cancel()
