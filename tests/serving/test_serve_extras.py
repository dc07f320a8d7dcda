"""What TensorFlow Serving's users expect of `python -m mtn_keras.serve` besides `predict`:
"output_filter", opt-in CORS, a request timeout (HTTP 504) and Prometheus metrics at
/monitoring/prometheus/metrics. On a two-signature model saved here, which costs no training."""

import json
import re
import time

import pytest

from mtn_keras.serve import arguments

ORIGIN = "https://search.example.com"


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    """A SavedModel whose `complete` suggests the last query plus the prefix."""
    import tensorflow as tf

    session_spec = tf.TensorSpec([None, None], tf.string, name="session")
    prefix_spec = tf.TensorSpec([None], tf.string, name="prefix")

    class Small(tf.Module):
        @tf.function(input_signature=[session_spec, prefix_spec])
        def complete(self, session, prefix):
            batch = tf.shape(session)[0]
            return {
                "suggestions": tf.stack([session[:, -1] + " " + prefix, prefix], 1),
                "scores": tf.tile([[-1.0, -2.0]], [batch, 1]),
                "sources": tf.fill([batch, 2], "model"),
            }

    path = tmp_path_factory.mktemp("small") / "savedmodel"
    small = Small()
    tf.saved_model.save(small, str(path), signatures={"complete": small.complete})
    return path


def client_of(path, **options):
    import tensorflow as tf
    from starlette.testclient import TestClient

    from mtn_keras.serving.rest import make_app

    return TestClient(make_app(tf.saved_model.load(str(path)), path, "small", **options))


def predict(client, **fields):
    body = {"signature_name": "complete", "inputs": {"session": [["cheap flights"]]}}
    body["inputs"]["prefix"] = ["ro"]
    return client.post("/v1/models/small:predict", content=json.dumps({**body, **fields}))


def test_output_filter_answers_only_the_outputs_asked_for(small_model):
    with client_of(small_model) as client:
        assert set(predict(client).json()["outputs"]) == {"suggestions", "scores", "sources"}
        got = predict(client, output_filter=["scores", "suggestions"]).json()["outputs"]
        assert got == {"suggestions": [["cheap flights ro", "ro"]], "scores": [[-1.0, -2.0]]}
        alone = predict(client, output_filter=["sources"]).json()
        assert alone == {"outputs": [["model", "model"]]}  # one output: bare, as TF Serving
        refused = predict(client, output_filter=["attention"])
        assert refused.status_code == 400
        assert refused.json()["error"] == (
            "output_filter: no output 'attention'; this signature has scores, sources, suggestions"
        )
        assert predict(client, output_filter="scores").status_code == 400


def test_cors_is_off_unless_an_origin_is_allowed(small_model):
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST"}
    with client_of(small_model) as client:
        assert "access-control-allow-origin" not in predict(client).headers
        assert client.options("/v1/models/small:predict", headers=preflight).status_code != 200
    with client_of(small_model, allow_origins=[ORIGIN]) as client:
        answer = client.options("/v1/models/small:predict", headers=preflight)
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in answer.headers["access-control-allow-methods"]
        posted = client.post(
            "/v1/models/small:predict",
            content=json.dumps(
                {"signature_name": "complete", "inputs": {"session": [["a"]], "prefix": [""]}}
            ),
            headers={"Origin": ORIGIN},
        )
        assert posted.headers["access-control-allow-origin"] == ORIGIN
        other = {**preflight, "Origin": "https://elsewhere.example.com"}
        assert client.options("/v1/models/small:predict", headers=other).status_code == 400


def test_a_slow_request_gets_504_and_every_request_is_counted(small_model):
    with client_of(small_model, timeout=0.3) as client:
        assert predict(client).status_code == 200
        assert predict(client, signature_name="nope").status_code == 400
        batcher = client.app.state.batchers["complete"]
        fast = batcher.function
        batcher.function = lambda **inputs: time.sleep(1.5) or fast(**inputs)
        slow = predict(client)
        assert slow.status_code == 504
        assert slow.json() == {"error": "no answer within 0.3 s (--request-timeout-s): try again"}
        batcher.function = fast
        page = client.get("/monitoring/prometheus/metrics")
    assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = page.text
    for line in text.splitlines():
        assert line.startswith("# ") or re.fullmatch(
            r'[a-z_:]+\{([A-Za-z_]+="[^"]*",?)+\} [0-9.e+-]+', line
        ), line
    count = ":tensorflow:serving:request_count_total"
    labels = 'entrypoint="REST",model_name="small",signature="complete"'
    assert f'{count}{{{labels},status="OK"}} 1.0' in text
    assert f'{count}{{{labels},status="DEADLINE_EXCEEDED"}} 1.0' in text
    unknown = 'entrypoint="REST",model_name="small",signature="unknown"'
    assert f'{count}{{{unknown},status="INVALID_ARGUMENT"}} 1.0' in text
    latency = 'API="Predict",entrypoint="REST",le="+Inf",model_name="small",signature="complete"'
    assert f":tensorflow:serving:request_latency_bucket{{{latency}}} 2.0" in text
    batch = 'model="small",signature="complete"'
    assert re.search(rf"mtn_serving_batch_sessions_count\{{{batch}\}} [12].0\n", text)


def test_the_options_are_read():
    args = arguments(["--allow-origin", ORIGIN, "--allow-origin", "http://localhost:3000"])
    assert args.allow_origin == [ORIGIN, "http://localhost:3000"]
    assert args.request_timeout_s is None
    assert arguments(["--request-timeout-s", "2.5"]).request_timeout_s == 2.5
