"""TensorFlow Serving's gRPC API, with tensorflow-serving-api's own service definitions, over
the model the REST API serves (rest.ServedModel): `PredictionService.Predict` and
`GetModelMetadata`, `ModelService.GetModelStatus`. A request is checked as REST checks it
(requests.py) and batched with REST's requests (batching.py); its errors get the gRPC status
codes TensorFlow Serving gives. Imported once TensorFlow is: grpc_door.py holds the port
until then."""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Any

import grpc
from tensorflow.core.framework import types_pb2
from tensorflow_serving.apis import (
    get_model_metadata_pb2,
    get_model_status_pb2,
    model_service_pb2_grpc,
    predict_pb2,
    prediction_service_pb2_grpc,
)

from mtn_keras.serving.grpc_door import Handlers
from mtn_keras.serving.requests import BadRequest, first_line, output_filter, parse_fields, too_slow
from mtn_keras.serving.rest import AVAILABLE, LOADING_MESSAGE, VERSION, ServedModel

if TYPE_CHECKING:
    from tensorflow.core.framework.tensor_pb2 import TensorProto
    from tensorflow_serving.apis.model_pb2 import ModelSpec

MAX_RANK = 2  # the inputs' largest rank (session, history); a deeper tensor is refused first
MAX_DIM = 100_000  # a dimension's size: --max-sessions' bound (an empty [10**9, 0] costs too)


class Refused(Exception):
    """A request answered with gRPC status `code` and a one-line message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def rows(tensor: TensorProto, where: str) -> Any:
    """The strings of a TensorProto as nested lists of str (its shape's), for parse_fields;
    a BadRequest naming `where` if it holds no strings or no UTF-8 text."""
    if tensor.dtype != types_pb2.DT_STRING:
        dtype = types_pb2.DataType.Name(tensor.dtype)
        raise BadRequest(f"{where}: a tensor of strings (DT_STRING) is wanted, not {dtype}")
    dims = [dim.size for dim in tensor.tensor_shape.dim]
    if len(dims) > MAX_RANK or not all(0 <= size <= MAX_DIM for size in dims):
        raise BadRequest(
            f"{where}: shape {dims}; the inputs have rank 1 (prefix) or 2, sizes to {MAX_DIM:,}"
        )
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


class Service(
    prediction_service_pb2_grpc.PredictionServiceServicer,
    model_service_pb2_grpc.ModelServiceServicer,
):
    """The gRPC methods over `served` (rest.ServedModel): predict, metadata and status."""

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

    async def Predict(
        self, request: predict_pb2.PredictRequest, context: grpc.aio.ServicerContext
    ) -> predict_pb2.PredictResponse:
        """The signature's outputs (those of `output_filter` when given) for the request's
        sessions; counted in the metrics by signature and status, as REST's are."""
        began, found = time.perf_counter(), dict[str, str]()
        try:
            answer, code = await self.predicted(request, found), grpc.StatusCode.OK
        except Refused as refused:
            answer, code, message = None, refused.code, str(refused)
        seconds = time.perf_counter() - began
        self.served.metrics.request(found.get("signature", ""), code.name, seconds, "GRPC")
        if answer is None:
            await context.abort(code, message)
        return answer

    async def predicted(
        self, request: predict_pb2.PredictRequest, found: dict[str, str]
    ) -> predict_pb2.PredictResponse:
        """Predict's answer; `found["signature"]` the signature once the request names it."""
        import tensorflow as tf

        self.found(request.model_spec)
        served = self.served
        try:
            fields = {
                "signature_name": request.model_spec.signature_name or "serving_default",
                "inputs": {key: rows(tensor, key) for key, tensor in request.inputs.items()},
            }
            if request.output_filter:
                fields["output_filter"] = list(request.output_filter)
            signature, columns, _ = parse_fields(fields, served.signatures, served.max_sessions)
            found["signature"] = signature
            wanted = output_filter(fields, served.outputs[signature])
            batcher = served.batchers[signature]
            outputs = await asyncio.wait_for(batcher.answer(columns), served.timeout)
        except BadRequest as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from None
        except TimeoutError:  # wait_for's own, which only a timeout raises
            assert served.timeout is not None
            raise Refused(
                grpc.StatusCode.DEADLINE_EXCEEDED, str(too_slow(served.timeout))
            ) from None
        except Exception as failure:  # TensorFlow's errors: say what, never a traceback
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, first_line(failure)) from None
        response = predict_pb2.PredictResponse()
        self.answered_spec(response.model_spec, signature)
        for key in wanted:
            response.outputs[key].CopyFrom(tf.make_tensor_proto(outputs[key]))
        return response

    async def GetModelMetadata(
        self,
        request: get_model_metadata_pb2.GetModelMetadataRequest,
        context: grpc.aio.ServicerContext,
    ) -> get_model_metadata_pb2.GetModelMetadataResponse:
        """The model's SignatureDefs, packed in `metadata["signature_def"]` as TensorFlow
        Serving packs them (a SignatureDefMap in an Any)."""
        try:
            self.found(request.model_spec)
            asked = list(request.metadata_field)
            if asked != ["signature_def"]:
                raise Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"metadata_field {asked}: this server gives ['signature_def']",
                )
        except Refused as refused:
            await context.abort(refused.code, str(refused))
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        self.answered_spec(response.model_spec, "")
        defs = get_model_metadata_pb2.SignatureDefMap()
        for key, value in self.served.signature_defs.items():
            defs.signature_def[key].CopyFrom(value)
        response.metadata["signature_def"].Pack(defs)
        return response

    async def GetModelStatus(
        self,
        request: get_model_status_pb2.GetModelStatusRequest,
        context: grpc.aio.ServicerContext,
    ) -> get_model_status_pb2.GetModelStatusResponse:
        """The model's one version and its state (LOADING, then AVAILABLE), as TensorFlow
        Serving reports it."""
        try:
            self.found(request.model_spec, loaded=False)
        except Refused as refused:
            await context.abort(refused.code, str(refused))
        state = get_model_status_pb2.ModelVersionStatus.State.Value(self.served.state)
        status = get_model_status_pb2.ModelVersionStatus(version=int(VERSION), state=state)
        return get_model_status_pb2.GetModelStatusResponse(model_version_status=[status])


def handlers(served: ServedModel) -> Handlers:
    """The generic handlers of the Service over `served`, for grpc_door.Door.open."""
    found, service = Handlers(), Service(served)
    prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(service, found)
    model_service_pb2_grpc.add_ModelServiceServicer_to_server(service, found)
    return found
