"""TensorFlow Serving's `PredictionLog` written by hand in protobuf's wire format, for the
warm-up records of an export (serving/warmup.py).

The message is defined in the tensorflow-serving-api package, which pins an older TensorFlow
than this project's and is not a part of TensorFlow; a warm-up record needs four of its
messages and six fields, all length-delimited, so they are encoded here. Field numbers from
tensorflow_serving/apis/prediction_log.proto, predict.proto and model.proto; the tensors are
TensorFlow's own TensorProto bytes.
"""

PREDICT_LOG = 6  # PredictionLog.predict_log (a PredictLog)
REQUEST = 1  # PredictLog.request (a PredictRequest)
MODEL_SPEC, INPUTS = 1, 2  # PredictRequest.model_spec; .inputs, a map<string, TensorProto>
NAME, SIGNATURE_NAME = 1, 3  # ModelSpec.name, ModelSpec.signature_name
KEY, VALUE = 1, 2  # the fields of a map's entry
LENGTH_DELIMITED = 2  # the wire type of strings, bytes and messages


def varint(value: int) -> bytes:
    """`value` (0 or more) as a varint: seven bits a byte, the lowest first, the high bit set
    on every byte but the last."""
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """Field `number` holding `payload` (a string, bytes or an encoded message)."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def prediction_log(model: str, signature: str, inputs: dict[str, bytes]) -> bytes:
    """A PredictionLog of a predict request for `signature` of `model`, with `inputs`: each
    input's serialized TensorProto by its name."""
    spec = field(NAME, model.encode()) + field(SIGNATURE_NAME, signature.encode())
    entries = b"".join(
        field(INPUTS, field(KEY, name.encode()) + field(VALUE, tensor))
        for name, tensor in inputs.items()
    )
    return field(PREDICT_LOG, field(REQUEST, field(MODEL_SPEC, spec) + entries))
