"""Reading an export's warm-up records back without tensorflow-serving-api: a small decoder of
protobuf's wire format, written apart from the encoder it checks (serving/prediction_log.py),
and the check that each record asks a signature the export has, with inputs it takes."""

import tensorflow as tf
from tensorflow.core.framework.tensor_pb2 import TensorProto

from mtn_keras.serving.warmup import SIGNATURES


def varint_at(data, at):
    """(the varint that starts at `at`, where the next field starts)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(message):
    """The (field number, bytes) of each field of `message`, all length-delimited."""
    found, at = [], 0
    while at < len(message):
        key, at = varint_at(message, at)
        assert key & 7 == 2, f"wire type {key & 7}"
        size, at = varint_at(message, at)
        found.append((key >> 3, message[at : at + size]))
        at += size
    assert at == len(message)
    return found


def only(message, number):
    """The bytes of the one field of `message`, which must be field `number`."""
    [(found, payload)] = fields(message)
    assert found == number, f"field {found}, not {number}"
    return payload


def read_request(record):
    """(model name, signature name, inputs as TensorProto by name) of a PredictionLog."""
    request = only(only(record, 6), 1)  # PredictionLog.predict_log, PredictLog.request
    spec, inputs = {}, {}
    for number, payload in fields(request):
        if number == 1:  # PredictRequest.model_spec
            spec = dict(fields(payload))
        else:
            assert number == 2  # PredictRequest.inputs: entries of key 1, value 2
            entry = dict(fields(payload))
            tensor = TensorProto()
            tensor.ParseFromString(entry[2])
            inputs[entry[1].decode()] = tensor
    assert set(spec) == {1, 3}  # ModelSpec.name, ModelSpec.signature_name
    return spec[1].decode(), spec[3].decode(), inputs


def check_warmup(path, model):
    """The export at `path` holds one warm-up request for each signature of SIGNATURES it has,
    for `model`, whose inputs are the signature's, with their dtypes and ranks, and each
    answers a list when called with them. Returns the signatures asked."""
    records = tf.data.TFRecordDataset(str(path / "assets.extra" / "tf_serving_warmup_requests"))
    requests = [read_request(record.numpy()) for record in records]
    loaded = tf.saved_model.load(str(path))
    asked = [signature for _, signature, _ in requests]
    assert asked == [name for name in SIGNATURES if name in loaded.signatures]
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
