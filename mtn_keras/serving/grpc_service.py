"""TensorFlow Serving's gRPC API, with tensorflow-serving-api's own messages, over the model the
REST API serves (rest.ServedModel): `PredictionService.Predict` and `GetModelMetadata`,
`ModelService.GetModelStatus`. Each call holds a place of its client's (grpc_door.Door's
Budget), its request must arrive within the read deadline, and is parsed, checked as REST
checks it (requests.py) and answered in a worker thread, never on the event loop; predicts
are batched with REST's (batching.py). Errors get TensorFlow Serving's status codes, in one
plain line. Imported once TensorFlow is: grpc_door.py holds the port until then."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import grpc
from google.protobuf.message import DecodeError
from tensorflow.core.framework import types_pb2
from tensorflow_serving.apis import get_model_metadata_pb2, get_model_status_pb2, predict_pb2

from mtn_keras.serving.requests import (
    MAX_ROW,
    MAX_SESSIONS,
    BadRequest,
    echoed,
    first_line,
    listed,
    output_filter,
    parse_fields,
    too_slow,
)
from mtn_keras.serving.rest import AVAILABLE, LOADING_MESSAGE, VERSION, ServedModel

if TYPE_CHECKING:
    from google.protobuf.message import Message
    from tensorflow.core.framework.tensor_pb2 import TensorProto
    from tensorflow_serving.apis.model_pb2 import ModelSpec

    from mtn_keras.serving.grpc_door import Door

MAX_RANK = 2  # the inputs' largest rank (session, history); a deeper tensor is refused first
# A method's work: (its parsed request, {"signature": ...} to fill) -> the answer's bytes.
Work = Callable[[Any, dict[str, str]], Awaitable[bytes]]


class Refused(Exception):
    """A request answered with gRPC status `code` and a one-line message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def rows(tensor: TensorProto, where: str, max_sessions: int = MAX_SESSIONS) -> Any:
    """The strings of a TensorProto as nested lists of str (its shape's), for parse_fields;
    a BadRequest naming `where` if it holds no strings or no UTF-8 text, or if its declared
    shape passes the bounds (checked before anything is built from it)."""
    if tensor.dtype != types_pb2.DT_STRING:
        dtype = types_pb2.DataType.Name(tensor.dtype)
        raise BadRequest(f"{where}: a tensor of strings (DT_STRING) is wanted, not {dtype}")
    dims = [dim.size for dim in tensor.tensor_shape.dim]
    if len(dims) > MAX_RANK or min(dims, default=0) < 0:
        said = dims if len(dims) <= MAX_RANK + 2 else f"of rank {len(dims)}"
        raise BadRequest(f"{where}: shape {said}; the inputs have rank 1 (prefix) or 2")
    if dims and dims[0] > max_sessions:
        raise BadRequest(
            f"{dims[0]} sessions in one request; at most {max_sessions} (--max-sessions): "
            "send them in several requests"
        )
    if len(dims) == MAX_RANK and dims[1] > MAX_ROW:
        raise BadRequest(f"{where}: {dims[1]} queries a row; at most {MAX_ROW}")
    if len(tensor.string_val) != math.prod(dims):
        raise BadRequest(f"{where}: {len(tensor.string_val)} strings for the shape {dims}")
    try:
        flat = [value.decode("utf-8") for value in tensor.string_val]
    except UnicodeDecodeError as error:
        raise BadRequest(f"{where}: not UTF-8 text (byte {error.start})") from None
    return nested(flat, dims)


def nested(flat: list[str], dims: list[int]) -> Any:
    """`flat` (row-major) as nested lists of shape `dims`; a scalar when `dims` is empty."""
    if not dims:
        return flat[0]
    size = math.prod(dims[1:])
    return [nested(flat[i * size : (i + 1) * size], dims[1:]) for i in range(dims[0])]


def version_of(spec: ModelSpec) -> str | None:
    """The version a ModelSpec asks for as text (a number or a label); None for the latest."""
    if spec.HasField("version"):
        return str(spec.version.value)
    return spec.version_label or None


def address_of(peer: str) -> str:
    """The client's address in a gRPC peer ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000")."""
    kind, _, rest = unquote(peer).partition(":")
    return rest.rpartition(":")[0].strip("[]") if kind in ("ipv4", "ipv6") else rest


class Service:
    """The gRPC methods over `served` (rest.ServedModel): predict, metadata and status, each
    a Work: its parsed request in, its answer's bytes out, Refused otherwise."""

    def __init__(self, served: ServedModel) -> None:
        self.served = served

    def found(self, spec: ModelSpec, loaded: bool = True) -> None:
        """Refused (NOT_FOUND, in TensorFlow Serving's words) unless `spec` names this model;
        with `loaded`, UNAVAILABLE while it loads."""
        if message := self.served.not_found(spec.name, version_of(spec)):
            raise Refused(grpc.StatusCode.NOT_FOUND, message)
        if loaded and self.served.state != AVAILABLE:
            raise Refused(grpc.StatusCode.UNAVAILABLE, LOADING_MESSAGE)

    def answered_spec(self, target: ModelSpec, signature: str) -> None:
        """Fill the ModelSpec `target` of an answer: this model, version 1, `signature`."""
        target.name, target.signature_name = self.served.name, signature
        target.version.value = int(VERSION)

    async def predict(self, request: predict_pb2.PredictRequest, found: dict[str, str]) -> bytes:
        """The signature's outputs (those of `output_filter` when given) for the request's
        sessions, from the batcher; `found["signature"]` the signature once it is named."""
        self.found(request.model_spec)
        served = self.served
        try:
            signature, columns, wanted = await asyncio.to_thread(self.checked, request, found)
            batcher = served.batchers[signature]
            outputs = await asyncio.wait_for(
                batcher.answer(columns, found["client"]), served.timeout
            )
            return await asyncio.to_thread(self.encoded, outputs, wanted, signature)
        except BadRequest as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from None
        except TimeoutError:  # wait_for's own, which only a timeout raises
            assert served.timeout is not None
            raise Refused(
                grpc.StatusCode.DEADLINE_EXCEEDED, str(too_slow(served.timeout))
            ) from None
        except Exception as failure:  # TensorFlow's errors: say what, never a traceback
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, first_line(failure)) from None

    def checked(
        self, request: predict_pb2.PredictRequest, found: dict[str, str]
    ) -> tuple[str, Any, list[str]]:
        """(signature, columns, outputs wanted) of a PredictRequest, checked as REST's."""
        served = self.served
        fields: dict[str, Any] = {
            "signature_name": request.model_spec.signature_name or "serving_default",
            "inputs": {
                key: rows(tensor, echoed(key), served.max_sessions)
                for key, tensor in request.inputs.items()
            },
        }
        if request.output_filter:
            fields["output_filter"] = list(request.output_filter)
        signature, columns, _ = parse_fields(fields, served.signatures, served.max_sessions)
        found["signature"] = signature
        return signature, columns, output_filter(fields, served.outputs[signature])

    def encoded(self, outputs: Any, wanted: list[str], signature: str) -> bytes:
        """The PredictResponse of `outputs` (those `wanted`), serialised."""
        import tensorflow as tf

        response = predict_pb2.PredictResponse()
        self.answered_spec(response.model_spec, signature)
        for key in wanted:
            response.outputs[key].CopyFrom(tf.make_tensor_proto(outputs[key]))
        return response.SerializeToString()

    async def metadata(
        self, request: get_model_metadata_pb2.GetModelMetadataRequest, found: dict[str, str]
    ) -> bytes:
        """The model's SignatureDefs, packed in `metadata["signature_def"]` as TensorFlow
        Serving packs them (a SignatureDefMap in an Any)."""
        self.found(request.model_spec)
        asked = list(request.metadata_field)
        if asked != ["signature_def"]:
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"metadata_field [{listed(asked)}]: this server gives ['signature_def']",
            )
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        self.answered_spec(response.model_spec, "")
        defs = get_model_metadata_pb2.SignatureDefMap()
        for key, value in self.served.signature_defs.items():
            defs.signature_def[key].CopyFrom(value)
        response.metadata["signature_def"].Pack(defs)
        return response.SerializeToString()

    async def status(
        self, request: get_model_status_pb2.GetModelStatusRequest, found: dict[str, str]
    ) -> bytes:
        """The model's one version and its state (LOADING, then AVAILABLE), as TensorFlow
        Serving reports it."""
        self.found(request.model_spec, loaded=False)
        state = get_model_status_pb2.ModelVersionStatus.State.Value(self.served.state)
        status = get_model_status_pb2.ModelVersionStatus(version=int(VERSION), state=state)
        answer = get_model_status_pb2.GetModelStatusResponse(model_version_status=[status])
        return answer.SerializeToString()


def guarded(work: Work, kind: type[Message], door: Door, counted: bool) -> grpc.RpcMethodHandler:
    """A handler that runs `work` on a request of message `kind` once its client has a place
    in `door.calls` and the request has arrived within `door.read_seconds` and parsed (in a
    worker thread); every refusal one plain line with its status code. With `counted`, each
    call is counted in the metrics, those the client gave up on (gone, or its deadline
    passed) as CANCELLED. A streaming handler, so that it starts before the request arrives."""

    async def handle(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> bytes:
        began, found = time.perf_counter(), {"client": address_of(context.peer())}
        status = "UNKNOWN"
        try:
            refused = door.calls.take(found["client"])
            if refused is not None:
                raise Refused(grpc.StatusCode.RESOURCE_EXHAUSTED, refused[1])
            try:
                answer = await work(await read(context, kind, door.read_seconds), found)
            finally:
                door.calls.give_back(found["client"])
            status = "OK"
            return answer
        except Refused as refused_call:
            status = refused_call.code.name
            await context.abort(refused_call.code, str(refused_call))
            raise  # not reached: abort raises gRPC's own error
        except asyncio.CancelledError:
            status = "CANCELLED"
            raise
        finally:
            if counted:
                seconds = time.perf_counter() - began
                door.metrics.request(found.get("signature", ""), status, seconds, "GRPC")

    return grpc.stream_unary_rpc_method_handler(handle)


async def read(context: grpc.aio.ServicerContext, kind: type[Message], seconds: float) -> Any:
    """The call's request message of `kind`, parsed in a worker thread; Refused if it does not
    arrive within `seconds` or is not such a message."""
    try:
        raw = await asyncio.wait_for(context.read(), seconds)
    except TimeoutError:
        raise Refused(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"the request did not arrive within {seconds:g} s (--read-timeout-s)",
        ) from None
    if raw is grpc.aio.EOF:  # gRPC itself refused a message over the bound, or none came
        raise Refused(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "no request message arrived: none was sent, or one over --max-body-mb",
        )
    try:
        return await asyncio.to_thread(kind.FromString, raw)
    except DecodeError:
        name = kind.DESCRIPTOR.name
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a valid {name} message"
        ) from None


def handlers(served: ServedModel, door: Door) -> list[grpc.GenericRpcHandler]:
    """The generic handlers of the Service over `served`, guarded by `door`, for Door.open."""
    service = Service(served)
    prediction = {
        "Predict": guarded(service.predict, predict_pb2.PredictRequest, door, True),
        "GetModelMetadata": guarded(
            service.metadata, get_model_metadata_pb2.GetModelMetadataRequest, door, False
        ),
    }
    status = {
        "GetModelStatus": guarded(
            service.status, get_model_status_pb2.GetModelStatusRequest, door, False
        )
    }
    return [
        grpc.method_handlers_generic_handler("tensorflow.serving.PredictionService", prediction),
        grpc.method_handlers_generic_handler("tensorflow.serving.ModelService", status),
    ]
