"""`python -m mtn_keras.serve`'s gRPC API, called as a TensorFlow Serving user calls it: with
tensorflow-serving-api's stubs. Its answers equal REST's on the bundled model; metadata,
status and errors as TensorFlow Serving gives them; both doors counted in the metrics."""

import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from hang_limit import HANG_S
from server_wait import wait_until_loaded

from mtn_keras.serve import arguments
from mtn_keras.serving.requests import BadRequest

SESSION = ["cheap flights", "rome hotels"]
HISTORY = ["weather rome", "rome museums"]
TWO = {"session": [SESSION, ["", "used cars"]], "history": [HISTORY] * 2}  # rectangular


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tensor(value):
    import tensorflow as tf

    return tf.make_tensor_proto(value)


def test_a_tensor_of_strings_reads_as_rows_and_anything_else_is_named():
    from mtn_keras.serving.grpc_service import rows

    assert rows(tensor([SESSION, ["", "x"]]), "session") == [SESSION, ["", "x"]]
    assert rows(tensor(["rome "]), "prefix") == ["rome "]
    assert rows(tensor(np.zeros([0, 0], dtype=object)), "session") == []
    for value, words in (
        ([[1, 2]], r"session: a tensor of strings \(DT_STRING\) is wanted, not DT_INT32"),
        ([[["a"]]], r"session: shape \[1, 1, 1\]; the inputs have rank 1 \(prefix\) or 2"),
    ):
        with pytest.raises(BadRequest, match=words):
            rows(tensor(value), "session")
    cut = tensor([["a", "b"]])
    del cut.string_val[1]
    with pytest.raises(BadRequest, match=r"1 strings for the shape \[1, 2\]"):
        rows(cut, "session")
    bad = tensor([[b"\xff"]])
    with pytest.raises(BadRequest, match="not UTF-8 text"):
        rows(bad, "session")


def test_the_grpc_port_is_8500_and_0_turns_it_off():
    assert arguments([]).grpc_port == 8500
    assert arguments(["--grpc-port", "0"]).grpc_port == 0


@pytest.mark.parametrize("door", ["--port", "--grpc-port"])
def test_a_port_in_use_is_one_line_before_the_model_loads(door):
    """REST's port or gRPC's: either taken is one line and exit 2, before any loading."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ports = {"--port": free_port(), "--grpc-port": free_port(), door: port}
        done = subprocess.run(
            [sys.executable, "-m", "mtn_keras.serve"]
            + [str(part) for pair in ports.items() for part in pair],
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"serve: 127.0.0.1:{port}: Address already in use"


def rest_state(url):
    import httpx

    return httpx.get(f"{url}/v1/models/mtn", timeout=5).json()["model_version_status"][0]["state"]


def loading_answers(url, channel, seen):
    """Add to `seen` what each door answers now: REST's status and predict, gRPC's status (a
    state, or the refusal's code and words) and predict codes. A predict counts only where
    the model still loads after it: on a busy machine it may become available in between."""
    import grpc
    import httpx
    from tensorflow_serving.apis import get_model_status_pb2, model_service_pb2_grpc

    state = rest_state(url)
    seen.setdefault("rest status", []).append(state)
    if state == "LOADING":
        answer = httpx.post(f"{url}/v1/models/mtn:predict", json={"instances": [SESSION]})
        if rest_state(url) == "LOADING":
            seen.setdefault("rest predict", []).append((answer.status_code, answer.text))
    models = model_service_pb2_grpc.ModelServiceStub(channel)
    request = get_model_status_pb2.GetModelStatusRequest(model_spec={"name": "mtn"})
    try:
        [status] = models.GetModelStatus(request, timeout=5).model_version_status
        name = get_model_status_pb2.ModelVersionStatus.State.Name(status.state)
    except grpc.RpcError as error:  # while TensorFlow is imported
        name = f"{error.code().name}: {error.details()}"
    seen.setdefault("grpc status", []).append(name)
    if name != "AVAILABLE":
        refused = refused_predict(channel)
        if rest_state(url) != "AVAILABLE":
            seen.setdefault("grpc predict", []).append(refused)


def refused_predict(channel):
    """(code name, details) of a predict refused while the model loads."""
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    try:
        stub.Predict(predict_request("suggest", session=[SESSION]), timeout=5)
    except grpc.RpcError as error:
        return error.code().name, error.details()
    return "OK", ""


@pytest.fixture(scope="module")
def doors():
    """(REST base URL, gRPC channel, what each door answered while the model loaded) of the
    bundled model served as `mtn`: batches of up to 8, 15 s per request (a signature's first
    call prepares its graph, while the batch sizes compile), 64 KiB a message."""
    import grpc
    import httpx

    rest, grpc_port = free_port(), free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mtn_keras.serve", "--model", "default", "--name", "mtn"]
        + ["--port", str(rest), "--grpc-port", str(grpc_port), "--max-batch", "8"]
        + ["--request-timeout-s", "15", "--max-body-mb", "0.0625"],
        stderr=subprocess.PIPE,
        text=True,
    )
    url, seen = f"http://127.0.0.1:{rest}", {"began": time.monotonic()}
    try:
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:

            def loaded():
                loading_answers(url, channel, seen)
                return seen.get("rest status", [""])[-1] == "AVAILABLE"

            wait_until_loaded(server, loaded, httpx.HTTPError, pause=0.2)
            yield url, channel, seen
    finally:
        server.terminate()
        server.wait(30)


def predict_request(signature, **inputs):
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name = "mtn"
    request.model_spec.signature_name = signature
    for key, value in inputs.items():
        request.inputs[key].CopyFrom(tensor(value))
    return request


def answered(stub, request):
    """The answer to a predict `request`, asked again while the server's 15 s deadline cuts it
    short: a signature's first call prepares its graph, which a busy machine may not finish
    in time. What the server answers is checked here, not how soon."""
    import grpc

    for _ in range(10):
        try:
            return stub.Predict(request, timeout=60)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
    return stub.Predict(request, timeout=60)


def refused(call, request):
    """The (status code, details) of a call that must fail."""
    import grpc

    with pytest.raises(grpc.RpcError) as error:
        call(request, timeout=60)
    return error.value.code(), error.value.details()


@pytest.mark.slow
def test_grpc_answers_as_rest_does(doors):
    import httpx
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    url, channel, _ = doors
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    for signature, inputs in (
        ("complete", {"session": [SESSION], "prefix": ["rome "]}),
        ("suggest_with_history", TWO),
    ):
        answer = answered(stub, predict_request(signature, **inputs))
        assert answer.model_spec.name == "mtn" and answer.model_spec.version.value == 1
        body = {"signature_name": signature, "inputs": inputs}
        rest = httpx.post(f"{url}/v1/models/mtn:predict", json=body, timeout=60).json()["outputs"]
        assert set(answer.outputs) == set(rest)
        suggestions = tf.make_ndarray(answer.outputs["suggestions"]).astype(str).tolist()
        assert suggestions == rest["suggestions"], signature
        np.testing.assert_allclose(tf.make_ndarray(answer.outputs["scores"]), rest["scores"])
    request = predict_request("complete", session=[SESSION], prefix=["rome "])
    request.output_filter.extend(["scores", "suggestions"])
    assert set(answered(stub, request).outputs) == {"scores", "suggestions"}


@pytest.mark.slow
def test_metadata_and_status_answer_as_tensorflow_servings(doors):
    import grpc
    import httpx
    from google.protobuf.json_format import MessageToDict
    from tensorflow_serving.apis import (
        get_model_metadata_pb2,
        get_model_status_pb2,
        model_service_pb2_grpc,
        prediction_service_pb2_grpc,
    )

    url, channel, _ = doors
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = "mtn"
    request.metadata_field.append("signature_def")
    answer = stub.GetModelMetadata(request, timeout=30)
    defs = get_model_metadata_pb2.SignatureDefMap()
    assert answer.metadata["signature_def"].Unpack(defs)
    rest = httpx.get(f"{url}/v1/models/mtn/metadata").json()["metadata"]["signature_def"]
    got = {key: MessageToDict(value) for key, value in defs.signature_def.items()}
    assert got == rest["signature_def"]
    assert defs.signature_def["complete"].inputs["prefix"].dtype == 7  # DT_STRING
    del request.metadata_field[:]
    assert refused(stub.GetModelMetadata, request)[0] == grpc.StatusCode.INVALID_ARGUMENT

    models = model_service_pb2_grpc.ModelServiceStub(channel)
    status = models.GetModelStatus(
        get_model_status_pb2.GetModelStatusRequest(model_spec={"name": "mtn"}), timeout=30
    )
    [version] = status.model_version_status
    assert version.version == 1 and version.state == version.AVAILABLE
    for spec in ({"name": "other"}, {"name": "mtn", "version": {"value": 2}}):
        asked = get_model_status_pb2.GetModelStatusRequest(model_spec=spec)
        code, details = refused(models.GetModelStatus, asked)
        assert code == grpc.StatusCode.NOT_FOUND and "Servable not found" in details


@pytest.mark.slow
def test_bad_requests_get_tensorflow_servings_codes_in_one_line_and_are_counted(doors):
    import httpx
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    url, channel, _ = doors
    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    other = predict_request("suggest", session=[SESSION])
    other.model_spec.name = "other"
    long = ["cheap flights to rome in may"] * 4
    for request, code, words in (
        (predict_request("nope", session=[SESSION]), "INVALID_ARGUMENT", "no signature 'nope'"),
        (predict_request("suggest", session=[[1]]), "INVALID_ARGUMENT", "not DT_INT32"),
        (predict_request("suggest", session=[["a" * 513]]), "INVALID_ARGUMENT", "at most 512"),
        (predict_request("suggest", session=[SESSION] * 1001), "INVALID_ARGUMENT", "at most 1000"),
        (predict_request("suggest", prefix=["a"]), "INVALID_ARGUMENT", "missing: session"),
        (other, "NOT_FOUND", "Latest(other)"),
        (predict_request("suggest", session=[long] * 600), "RESOURCE_EXHAUSTED", "larger than"),
        (predict_request("suggest", session=[SESSION] * 1000), "DEADLINE_EXCEEDED", "within 15 s"),
    ):
        got, details = refused(stub.Predict, request)
        assert (got.name, "\n" in details) == (code, False), details
        assert words in details, details
    assert answered(stub, predict_request("suggest", session=[SESSION])).outputs
    metrics = httpx.get(f"{url}/monitoring/prometheus/metrics").text
    counted = [
        line
        for line in metrics.splitlines()
        if line.startswith(":tensorflow:serving:request_count_total") and "GRPC" in line
    ]
    # UNAVAILABLE: the predicts refused while the model loaded; an oversized message's
    # RESOURCE_EXHAUSTED is counted too, since the handler reads the request itself
    statuses = ("OK", "INVALID_ARGUMENT", "NOT_FOUND", "DEADLINE_EXCEEDED", "UNAVAILABLE")
    for status in (*statuses, "RESOURCE_EXHAUSTED"):
        assert any(f'status="{status}"' in line for line in counted), status


@pytest.mark.slow
def test_both_doors_say_loading_then_available_and_refuse_predict_in_one_line(doors):
    _, _, seen = doors
    assert seen["rest status"][0] == "LOADING" and seen["rest status"][-1] == "AVAILABLE"
    loading = "the model is loading: try again in a few seconds"
    assert set(seen["rest predict"]) == {(503, f'{{"error": "{loading}"}}')}
    # gRPC answers from REST's first answer on: before TensorFlow (its protos) is imported
    # every method UNAVAILABLE (a quick import leaves no poll there), then GetModelStatus
    # LOADING, then AVAILABLE
    statuses, order = seen["grpc status"], [f"UNAVAILABLE: {loading}", "LOADING", "AVAILABLE"]
    assert "LOADING" in statuses and statuses[-1] == "AVAILABLE", statuses
    assert sorted(statuses, key=order.index) == statuses, statuses
    assert set(seen["grpc predict"]) == {("UNAVAILABLE", loading)}
