"""`export` writes TensorFlow Serving's warm-up records (assets.extra/tf_serving_warmup_requests):
PredictionLog protos encoded by hand, read back here by a decoder of their own."""

import json

import pytest
from warmup_records import check_warmup, fields, only

from mtn_keras.serving.prediction_log import field, prediction_log, varint


def test_varints_and_fields_are_protobufs():
    assert [varint(n) for n in (0, 1, 127, 128, 300)] == [
        b"\x00",
        b"\x01",
        b"\x7f",
        b"\x80\x01",
        b"\xac\x02",  # protobuf's own example of a varint
    ]
    assert field(3, b"suggest") == b"\x1a\x07suggest"
    long = b"x" * 200
    assert fields(field(2, long) + field(1, b"")) == [(2, long), (1, b"")]


def test_a_prediction_log_holds_its_model_signature_and_inputs():
    record = prediction_log("mtn", "complete", {"session": b"S", "prefix": b"P"})
    spec, *entries = fields(only(only(record, 6), 1))
    assert spec == (1, field(1, b"mtn") + field(3, b"complete"))
    assert [dict(fields(entry)) for number, entry in entries if number == 2] == [
        {1: b"session", 2: b"S"},
        {1: b"prefix", 2: b"P"},
    ]


@pytest.mark.slow
def test_an_export_warms_up_suggest_and_complete(exported):
    model = json.loads((exported / "export.json").read_text())["model"]
    assert check_warmup(exported, model) == ["suggest", "complete"]
