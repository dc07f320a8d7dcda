"""Reading an export's warm-up records back with TensorFlow Serving's own `PredictionLog`
(tensorflow-serving-api), and the check that each record asks a signature the export has,
with inputs it takes, and is answered by it."""

import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from mtn_keras.serving.warmup import WARMED_SIGNATURES


def read_request(record):
    """(model name, signature name, inputs as TensorProto by name) of a PredictionLog."""
    log = prediction_log_pb2.PredictionLog.FromString(record)
    assert log.WhichOneof("log_type") == "predict_log"
    request = log.predict_log.request
    return request.model_spec.name, request.model_spec.signature_name, dict(request.inputs)


def check_warmup(path, model):
    """The export at `path` holds one warm-up request for each signature of WARMED_SIGNATURES
    it has, for `model`, whose inputs are the signature's, with their dtypes and ranks, and each
    answers a list when called with them. Returns the signatures asked."""
    records = tf.data.TFRecordDataset(str(path / "assets.extra" / "tf_serving_warmup_requests"))
    requests = [read_request(record.numpy()) for record in records]
    loaded = tf.saved_model.load(str(path))
    asked = [signature for _, signature, _ in requests]
    assert asked == [name for name in WARMED_SIGNATURES if name in loaded.signatures]
    for name, signature, inputs in requests:
        assert name == model
        function = loaded.signatures[signature]
        specs = function.structured_input_signature[1]
        assert set(inputs) == set(specs), signature
        for key, tensor in inputs.items():
            assert tensor.dtype == specs[key].dtype.as_datatype_enum
            assert len(tensor.tensor_shape.dim) == specs[key].shape.rank
        out = function(**{key: tf.constant(tf.make_ndarray(t)) for key, t in inputs.items()})
        assert out["suggestions"].shape[0] == 1 and out["scores"].shape[0] == 1
    return asked
