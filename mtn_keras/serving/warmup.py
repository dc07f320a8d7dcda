"""An export's warm-up records, `assets.extra/tf_serving_warmup_requests`: one predict request
for each signature a search box calls, which TensorFlow Serving runs when it loads the model
(`--enable_model_warmup`, on by default), so that preparing and compiling each graph does not
fall on the first real request. Each is TensorFlow Serving's own `PredictionLog` message
(tensorflow-serving-api)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import tensorflow as tf
from tensorflow_serving.apis import model_pb2, predict_pb2, prediction_log_pb2

if TYPE_CHECKING:
    from mtn_keras.serving.requests import Columns

FOLDER, FILE = "assets.extra", "tf_serving_warmup_requests"
# Those a search box calls; `session_attention` and `serving_default` are left to their callers.
WARMED_SIGNATURES = ("suggest", "complete", "suggest_with_history", "complete_with_history")
# A made-up request of one session, as a search box sends it (docs/serving.md's example).
EXAMPLE: Columns = {
    "session": [["cheap flights", "rome hotels"]],
    "prefix": ["rome "],
    "history": [["weather rome", "rome museums"]],
}


def write_warmup(
    directory: str, model: str, signatures: Mapping[str, tf.types.experimental.PolymorphicFunction]
) -> None:
    """Write the warm-up records of the SavedModel in `directory`: model `model`, its
    `signatures` (name -> tf.function) those of WARMED_SIGNATURES it has."""
    os.makedirs(os.path.join(directory, FOLDER), exist_ok=True)
    with tf.io.TFRecordWriter(os.path.join(directory, FOLDER, FILE)) as writer:
        for name in (name for name in WARMED_SIGNATURES if name in signatures):
            specs = signatures[name].input_signature
            inputs = {spec.name: EXAMPLE[spec.name] for spec in specs}
            writer.write(prediction_log(model, name, inputs).SerializeToString())


def prediction_log(model: str, signature: str, inputs: Columns) -> prediction_log_pb2.PredictionLog:
    """A PredictionLog of a predict request for `signature` of `model` with `inputs` (rows of
    strings by input name), as TensorFlow Serving reads its warm-up records."""
    request = predict_pb2.PredictRequest(
        model_spec=model_pb2.ModelSpec(name=model, signature_name=signature)
    )
    for key, rows in inputs.items():
        request.inputs[key].CopyFrom(tf.make_tensor_proto(rows, tf.string))
    return prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=request)
    )
