"""One client against everyone, on both doors of `python -m mtn_keras.serve`: per-address
budgets refused in JSON (REST) or RESOURCE_EXHAUSTED (gRPC), read deadlines on both doors,
requests checked before anything is built from them, a model call's sessions split between
clients, errors in one plain short line, calls given up by their client counted as
CANCELLED, and a stop within its grace whatever is in flight. One server for the module,
on a model that sleeps as many seconds as a session's last query says: calls are held in
flight without work, so the limits are set small and nothing here is timed tightly."""

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from server_wait import wait_until_loaded
from test_serve_connections import closed_by_the_server
from test_serve_grpc import free_port, predict_request

from mtn_keras.serving.requests import BadRequest

READ_S, CLIENT_CONNECTIONS, CONNECTIONS, CLIENT_STREAMS = 2, 4, 12, 3
SLACK_S = 15  # what a busy machine may add to a deadline before the test calls it missed
PREDICT = "/tensorflow.serving.PredictionService/Predict"


def save_sleepy_model(path):
    """A SavedModel whose `suggest` sleeps as many seconds as the largest number among its
    sessions' last queries (0 for words), then suggests each last query."""
    import tensorflow as tf

    class Sleepy(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string, name="session")])
        def suggest(self, session):
            batch = tf.shape(session)[0]
            last = tf.concat([tf.fill([batch, 1], ""), session], 1)[:, -1]
            numbers = tf.where(tf.strings.regex_full_match(last, "[0-9]+"), last, "0")
            seconds = tf.reduce_max(tf.concat([tf.strings.to_number(numbers), [0.0]], 0))
            one = tf.data.Dataset.range(1)
            variant = tf.raw_ops.SleepDataset(
                input_dataset=one._variant_tensor,
                sleep_microseconds=tf.cast(seconds * 1e6, tf.int64),
                output_types=[tf.int64],
                output_shapes=[[]],
            )
            slept = tf.data.experimental.from_variant(variant, one.element_spec)
            zero = slept.reduce(tf.constant(0, tf.int64), lambda total, x: total + x)
            scores = tf.fill([batch, 1], tf.cast(zero, tf.float32))
            return {"suggestions": tf.expand_dims(last, 1), "scores": scores}

    model = Sleepy()
    tf.saved_model.save(model, str(path), signatures={"suggest": model.suggest})
    return path


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    """(REST port, gRPC port, the server's process) of the sleepy model served as `mtn` with
    small budgets: READ_S to send a request, CLIENT_CONNECTIONS REST connections an address,
    CONNECTIONS a door, CLIENT_STREAMS gRPC calls an address."""
    import httpx

    path = save_sleepy_model(tmp_path_factory.mktemp("sleepy") / "savedmodel")
    rest, grpc_port = free_port(), free_port()
    limits = f"--read-timeout-s {READ_S} --max-client-connections {CLIENT_CONNECTIONS} "
    limits += f"--max-connections {CONNECTIONS} --max-client-streams {CLIENT_STREAMS}"
    server = subprocess.Popen(
        [sys.executable, "-m", "mtn_keras.serve", "--model", str(path), "--name", "mtn"]
        + ["--port", str(rest), "--grpc-port", str(grpc_port), "--max-batch", "2"]
        + limits.split(),
        stderr=subprocess.PIPE,
        text=True,
    )

    def loaded():
        status = httpx.get(f"http://127.0.0.1:{rest}/v1/models/mtn", timeout=5).json()
        return status["model_version_status"][0]["state"] == "AVAILABLE"

    try:
        wait_until_loaded(server, loaded, httpx.HTTPError, pause=0.3)
        yield rest, grpc_port, server
    finally:
        server.kill()
        server.wait(30)


def connect(port, source="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))


def http_answer(conn, request):
    """(status, headers text, body) of `request` (bytes) sent on `conn`, read to its close."""
    conn.sendall(request)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), head.decode().lower(), body


STATUS = b"GET /v1/models/mtn HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.slow
def test_an_addresss_idle_connections_leave_others_served_and_extra_ones_get_json(doors):
    import httpx

    rest = doors[0]
    idle = [connect(rest, "127.0.0.2") for _ in range(CLIENT_CONNECTIONS)]
    time.sleep(0.2)
    status, head, body = http_answer(connect(rest, "127.0.0.2"), STATUS)
    assert status == 429 and "application/json" in head, body
    assert "--max-client-connections" in json.loads(body)["error"]
    answer = httpx.get(f"http://127.0.0.1:{rest}/v1/models/mtn", timeout=30)
    assert answer.status_code == 200, answer.text
    # a door's own bound: past it, another address is refused in JSON too
    others = [connect(rest, f"127.0.0.{3 + i // 4}") for i in range(CONNECTIONS - len(idle))]
    time.sleep(0.2)
    status, head, body = http_answer(connect(rest, "127.0.0.9"), STATUS)
    assert status == 503 and "application/json" in head and set(json.loads(body)) == {"error"}
    assert all(closed_by_the_server(conn, READ_S + SLACK_S) for conn in idle + others)
    for conn in idle + others:
        conn.close()


@pytest.mark.slow
def test_slow_drips_are_cut_off_and_what_is_not_http_gets_json(doors):
    rest = doors[0]
    drip, began, cut = connect(rest, "127.0.0.2"), time.monotonic(), False
    try:
        for byte in STATUS[:-2] * 100:  # a byte every 0.2 s, never the request's end
            drip.send(bytes([byte]))
            time.sleep(0.2)
            if time.monotonic() - began > READ_S + SLACK_S:
                break
    except (BrokenPipeError, ConnectionResetError):
        cut = True
    cut = cut or closed_by_the_server(drip, 1)
    assert cut and time.monotonic() - began < READ_S + SLACK_S
    drip.close()
    status, head, body = http_answer(connect(rest), b"\x16\x03\x01 not http\r\n\r\n")
    assert status == 400 and "application/json" in head and set(json.loads(body)) == {"error"}


def test_a_declared_shape_is_refused_before_anything_is_built(monkeypatch):
    import tensorflow as tf

    from mtn_keras.serving import grpc_service

    monkeypatch.setattr(grpc_service, "nested", lambda *_: pytest.fail("rows were built"))
    empty = tf.make_tensor_proto(np.zeros([0, 0], dtype=object))
    empty.tensor_shape.dim[0].size = 100_000  # 45 bytes that ask for 100,000 rows
    with pytest.raises(BadRequest, match=r"100000 sessions in one request; at most 1000"):
        grpc_service.rows(empty, "session", 1000)
    empty.tensor_shape.dim[0].size, empty.tensor_shape.dim[1].size = 1, 10**6
    with pytest.raises(BadRequest, match=r"1000000 queries a row; at most 1000"):
        grpc_service.rows(empty, "session", 1000)
    for _ in range(5000):
        empty.tensor_shape.dim.add(size=0)
    with pytest.raises(BadRequest, match=r"shape of rank 5002; ") as refused:
        grpc_service.rows(empty, "session", 1000)
    assert len(str(refused.value)) < 200


async def test_a_clients_many_requests_do_not_hold_another_clients_behind_them():
    import tensorflow as tf

    from mtn_keras.serving.batching import Batcher

    calls = []

    def counting(session):
        calls.append([query.decode() for query in session[:, -1].numpy()])
        return {"scores": tf.strings.length(session[:, -1])}

    batcher = Batcher(counting, ["session"], wait=0.001, max_batch=64, client_share=2)
    many = [asyncio.create_task(batcher.answer({"session": [["abc"]]}, "a")) for _ in range(200)]
    while not calls:
        await asyncio.sleep(0.001)
    before = len(calls)  # however many a busy machine let through before "b" asks
    answer = await batcher.answer({"session": [["ab"]]}, "b")
    assert answer["scores"].tolist() == [2]
    # at most one call assembled before "b" came, then one that "b" shares
    shared = next(i for i, queries in enumerate(calls) if "ab" in queries)
    assert shared - before <= 1 and max(map(len, calls)) <= 2, calls
    assert [len(a["scores"]) for a in await asyncio.gather(*many)] == [1] * 200
    batcher.task.cancel()


def test_both_doors_keep_to_the_open_file_limit(monkeypatch):
    import resource

    from mtn_keras.serving import connections

    monkeypatch.setattr(resource, "getrlimit", lambda kind: (4096, 4096))
    allowed = connections.connections_allowed(100_000)
    assert 2 * allowed + connections.FILES_KEPT <= 4096 and allowed > 1000
    assert connections.connections_allowed(64) == 64


def failed(call, *args, **options):
    """(code name, details) of a gRPC call that must fail."""
    import grpc

    with pytest.raises(grpc.RpcError) as error:
        call(*args, **options)
    return error.value.code().name, error.value.details()


@pytest.mark.slow
def test_grpc_calls_that_stall_are_cut_off_and_an_address_past_its_streams_is_refused(doors):
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    address, never = f"127.0.0.1:{doors[1]}", threading.Event()

    def nothing():
        never.wait()
        yield b""

    own = [("grpc.use_local_subchannel_pool", 1)]  # two connections, not one shared
    with (
        grpc.insecure_channel(address, own) as first,
        grpc.insecure_channel(address, own) as second,
    ):
        # one more than the address may have, over two connections: one is refused at once
        held = [
            channel.stream_unary(PREDICT).future(nothing(), timeout=60)
            for channel in (first, second)
            for _ in range(2)
        ]
        ends = sorted((call.exception(SLACK_S + 60).code().name, call.details()) for call in held)
        assert [code for code, _ in ends] == ["DEADLINE_EXCEEDED"] * 3 + ["RESOURCE_EXHAUSTED"]
        assert all("--read-timeout-s" in details for _, details in ends[:3]), ends
        assert "--max-client-streams" in ends[3][1], ends
        stub = prediction_service_pb2_grpc.PredictionServiceStub(second)
        honest = predict_request("suggest", session=[["cheap flights"]])
        assert stub.Predict(honest, timeout=60).outputs  # their places are free again
        never.set()


@pytest.mark.slow
def test_a_grpc_connection_that_sends_nothing_is_closed_at_the_read_deadline(doors):
    import httpx

    idle = [connect(doors[1]) for _ in range(CONNECTIONS)]
    past = connect(doors[1])  # past the door's bound: closed at once
    assert closed_by_the_server(past, SLACK_S)
    answer = httpx.get(f"http://127.0.0.1:{doors[0]}/v1/models/mtn", timeout=30)
    assert answer.status_code == 200  # REST still accepts
    assert all(closed_by_the_server(conn, READ_S + SLACK_S) for conn in idle)
    for conn in idle + [past]:
        conn.close()


@pytest.mark.slow
def test_bad_messages_and_many_unknown_names_get_one_short_plain_line(doors):
    import grpc
    import httpx

    with grpc.insecure_channel(f"127.0.0.1:{doors[1]}") as channel:
        raw = channel.unary_unary(PREDICT)
        code, details = failed(raw, b"\xff\xff\xff\xff", timeout=60)
        assert code == "INVALID_ARGUMENT"
        assert details == "the request is not a valid PredictRequest message"
        unknown = {f"x{i:05}": ["a"] for i in range(3000)}
        many = predict_request("suggest", session=[["cheap flights"]], **unknown)
        code, details = failed(channel.unary_unary(PREDICT), many.SerializeToString(), timeout=60)
        assert code == "INVALID_ARGUMENT" and len(details) < 400, details
        assert "'x00000', 'x00001', 'x00002', 'x00003', 'x00004' and 2,995 more" in details
    instance = {"session": ["a"]} | {f"y{i}": 1 for i in range(50_000)}
    answer = httpx.post(
        f"http://127.0.0.1:{doors[0]}/v1/models/mtn:predict",
        json={"signature_name": "suggest", "instances": [instance]},
        timeout=60,
    )
    assert answer.status_code == 400 and len(answer.text) < 400, answer.text[:500]
    assert "and 49,995 more" in answer.json()["error"]


def counted(rest, status, entrypoint):
    """The number of predicts of `status` through `entrypoint` in the server's metrics."""
    import httpx

    text = httpx.get(f"http://127.0.0.1:{rest}/monitoring/prometheus/metrics", timeout=30).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(":tensorflow:serving:request_count_total")
        and f'status="{status}"' in line
        and f'entrypoint="{entrypoint}"' in line
    )


@pytest.mark.slow
def test_calls_their_clients_gave_up_on_are_counted_as_cancelled(doors):
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    rest = doors[0]
    with grpc.insecure_channel(f"127.0.0.1:{doors[1]}") as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        code, _ = failed(stub.Predict, predict_request("suggest", session=[["3"]]), timeout=0.5)
        assert code == "DEADLINE_EXCEEDED"
    body = json.dumps({"signature_name": "suggest", "instances": [["3"]]}).encode()
    head = f"POST /v1/models/mtn:predict HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}"
    with connect(rest) as conn:
        conn.sendall(head.encode() + b"\r\n\r\n" + body)
        time.sleep(0.5)  # then the client hangs up
    invalid = counted(rest, "INVALID_ARGUMENT", "REST")
    until = time.monotonic() + SLACK_S + 10
    while time.monotonic() < until:
        if counted(rest, "CANCELLED", "GRPC") and counted(rest, "CANCELLED", "REST"):
            break
        time.sleep(0.3)
    assert counted(rest, "CANCELLED", "GRPC") == 1 and counted(rest, "CANCELLED", "REST") == 1
    assert counted(rest, "INVALID_ARGUMENT", "REST") == invalid


@pytest.mark.slow
def test_sigterm_exits_within_its_grace_with_a_large_request_in_flight(doors):
    """Last: it stops the module's server. Each model call of this request sleeps 30 s."""
    from mtn_keras.serve import GRACE_S

    rest, _, server = doors
    body = json.dumps({"signature_name": "suggest", "instances": [["30"]] * 1000}).encode()
    head = f"POST /v1/models/mtn:predict HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}"
    answers = []
    conn = connect(rest)
    conn.settimeout(GRACE_S + SLACK_S)
    asking = threading.Thread(
        target=lambda: answers.append(http_answer(conn, head.encode() + b"\r\n\r\n" + body))
    )
    asking.start()
    time.sleep(1.5)  # its first model call runs
    began = time.monotonic()
    server.send_signal(signal.SIGTERM)
    server.wait(GRACE_S + SLACK_S + 30)
    assert time.monotonic() - began < GRACE_S + 4, time.monotonic() - began
    asking.join(SLACK_S)
    status, _, answered = answers[0]
    assert status == 503 and b'{"error": "the server is stopping: try again"}' in answered
    assert "Traceback" not in server.stderr.read()
    conn.close()
