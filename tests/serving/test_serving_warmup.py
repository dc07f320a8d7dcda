"""`export` writes TensorFlow Serving's warm-up records (assets.extra/tf_serving_warmup_requests):
PredictionLog messages of tensorflow-serving-api, read back here and run through the export."""

import json

import pytest
from warmup_records import check_warmup, read_request

from mtn_keras.serving.warmup import prediction_log

# The bytes the hand encoder of earlier exports wrote for this request: the library's message
# is the same, so exports made before and after read alike.
HAND_ENCODED = (
    b"21\n/\n\x0e\n\x03mtn\x1a\x07suggest\x12\x1d\n\x07session\x12\x12"
    b"\x08\x07\x12\x08\x12\x02\x08\x01\x12\x02\x08\x01B\x04rome"
)


def test_a_prediction_log_is_the_hand_encoded_one_of_earlier_exports():
    assert prediction_log("mtn", "suggest", {"session": [["rome"]]}).SerializeToString() == (
        HAND_ENCODED
    )


def test_a_prediction_log_holds_its_model_signature_and_inputs():
    record = prediction_log("mtn", "complete", {"session": [["a", "b"]], "prefix": ["c"]})
    model, signature, inputs = read_request(record.SerializeToString())
    assert (model, signature, sorted(inputs)) == ("mtn", "complete", ["prefix", "session"])
    assert inputs["session"].string_val == [b"a", b"b"]
    assert [dim.size for dim in inputs["session"].tensor_shape.dim] == [1, 2]


@pytest.mark.slow
def test_an_export_warms_up_suggest_and_complete(exported):
    model = json.loads((exported / "export.json").read_text())["model"]
    assert check_warmup(exported, model) == ["suggest", "complete"]
