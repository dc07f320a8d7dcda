"""TensorFlow Serving's REST API over a loaded SavedModel, as a Starlette app: each request
read whole within a bound and checked alone (requests.py), its sessions batched with other
requests' (batching.py), answers in row or columnar form. `python -m mtn_keras.serve` runs it
under uvicorn."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mtn_keras.serving.batching import CLIENT_SHARE, Batcher
from mtn_keras.serving.metrics import CONTENT_TYPE, HTTP_STATUS, Metrics
from mtn_keras.serving.requests import (
    INPUT_RANKS,
    MAX_SESSIONS,
    BadRequest,
    Columns,
    TooLarge,
    TooSlow,
    echoed,
    first_line,
    output_filter,
    parse_fields,
    read_body,
    read_json,
    unless_gone,
)
from mtn_keras.serving.savedmodel import Loaded, signature_defs

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
    from tensorflow.core.protobuf.meta_graph_pb2 import SignatureDef

MAX_BODY_MB = 8  # a request's body: 1,000 sessions with 200-query histories fit in it
CANCELLED = 499  # a request whose client hung up (nginx's code); nobody reads the answer
VERSION = "1"  # the one version this server has, as TensorFlow Serving numbers them
AVAILABLE = "AVAILABLE"  # a version's state once it answers (LOADING before)
LOADING_MESSAGE = "the model is loading: try again in a few seconds"


def as_json(value: np.ndarray | np.generic) -> object:
    """A numpy output as JSON values: bytes as UTF-8 text, floats as floats (-inf as
    -Infinity, as TensorFlow Serving writes it)."""
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return np.char.decode(value.astype(bytes), "utf-8", "replace").tolist()
    return value.tolist()


def response(outputs: Mapping[str, np.ndarray], form: str) -> dict[str, object]:
    """The JSON body of an answer in the request's form, as TensorFlow Serving writes it."""
    if form == "row":
        names = list(outputs)
        size = len(next(iter(outputs.values())))
        if len(names) == 1:
            return {"predictions": as_json(outputs[names[0]])}
        return {
            "predictions": [{key: as_json(outputs[key][i]) for key in names} for i in range(size)]
        }
    if len(outputs) == 1:
        return {"outputs": as_json(next(iter(outputs.values())))}
    return {"outputs": {key: as_json(value) for key, value in outputs.items()}}


def metadata(defs: Mapping[str, SignatureDef], name: str) -> dict[str, object]:
    """GET .../metadata: the SignatureDefs `defs` (by name) as TensorFlow Serving gives them."""
    from google.protobuf.json_format import MessageToDict

    return {
        "model_spec": {"name": name, "signature_name": "", "version": VERSION},
        "metadata": {
            "signature_def": {"signature_def": {k: MessageToDict(v) for k, v in defs.items()}}
        },
    }


def make_app(
    loaded: Loaded | None,
    path: Path,
    name: str,
    wait: float = 0.005,
    max_batch: int = 64,
    max_sessions: int = MAX_SESSIONS,
    max_body_mb: float = MAX_BODY_MB,
    allow_origins: Sequence[str] = (),
    timeout: float | None = None,
    client_share: int = CLIENT_SHARE,
) -> Starlette:
    """The Starlette app serving the loaded SavedModel at `path` as model `name` (`loaded`
    None: LOADING until app.state.served is made ready and AVAILABLE). Browsers
    on `allow_origins` may call it (CORS, preflight answered); a request not answered within
    `timeout` seconds (None: no bound) gets HTTP 504; a model call's sessions are split
    between the clients waiting, `client_share` of them (batching.py)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware

    served = ServedModel(path, name, wait, max_batch, max_sessions, max_body_mb)
    served.timeout, served.client_share = timeout, client_share
    if loaded is not None:
        served.ready(loaded)
        served.state = AVAILABLE
    cors = Middleware(
        CORSMiddleware,
        allow_origins=list(allow_origins),
        allow_methods=["GET", "POST"],
        allow_headers=["Content-Type"],
    )
    app = Starlette(
        routes=served.routes(),
        middleware=[cors] if allow_origins else [],
        exception_handlers={404: no_such_path, 405: no_such_path},
    )
    app.state.batchers = served.batchers  # one per signature, to look at in tests
    app.state.served = served  # the gRPC API serves it too (grpc_service.py)
    return app


def serving_json(outputs: Mapping[str, np.ndarray], form: str) -> bytes:
    """The answer's body, JSON as TensorFlow Serving writes it: -inf (the score of an empty
    slot) as -Infinity, which Python's json reads and a strict parser (JavaScript's) does not."""
    return json.dumps(response(outputs, form), ensure_ascii=False, allow_nan=True).encode()


def error(message: str, status: int = 400) -> Response:
    """An error answer: {"error": message} with the HTTP `status`; the message in ASCII, so
    that whatever of the client's text it repeats encodes."""
    from starlette.responses import Response

    body = json.dumps({"error": message}, ensure_ascii=True)
    return Response(body, status_code=status, media_type="application/json")


async def no_such_path(request: Request, exc: Exception) -> Response:
    """A path or method the server does not serve, answered as every error is: JSON."""
    if getattr(exc, "status_code", 404) == 405:
        return error(f"{request.method} is not served at {request.url.path}", 405)
    return error(f"no such path: {request.url.path} (see GET /v1/models/NAME/metadata)", 404)


class ServedModel:
    """The REST endpoints of one SavedModel served as model `name`: its status, its metadata
    and `:predict`, each signature's requests batched (Batcher); 503 until it is loaded."""

    def __init__(
        self,
        path: Path,
        name: str,
        wait: float,
        max_batch: int,
        max_sessions: int,
        max_body_mb: float,
    ) -> None:
        self.path, self.name, self.max_sessions = path, name, max_sessions
        self.timeout: float | None = None  # seconds a request may take (None: no bound)
        self.client_share = CLIENT_SHARE  # a model call's sessions split between clients
        self.wait, self.max_batch = wait, max_batch
        self.max_body = int(max_body_mb * 2**20)
        self.metrics = Metrics(name)
        self.state = "LOADING"  # then AVAILABLE, as TensorFlow Serving reports a version
        self.batchers: dict[str, Batcher] = {}

    def ready(self, loaded: Loaded) -> None:
        """Take the loaded SavedModel: its signatures, each with its Batcher, and their
        SignatureDefs (the state stays LOADING until the caller says AVAILABLE)."""
        self.signatures = {
            key: sorted(fn.structured_input_signature[1], key=list(INPUT_RANKS).index)
            for key, fn in loaded.signatures.items()
        }
        self.outputs = {key: list(fn.structured_outputs) for key, fn in loaded.signatures.items()}
        self.batchers.update(
            {
                key: Batcher(
                    loaded.signatures[key],
                    names,
                    self.wait,
                    self.max_batch,
                    observe=partial(self.metrics.batch, key),
                    client_share=self.client_share,
                )
                for key, names in self.signatures.items()
            }
        )
        self.signature_defs = signature_defs(self.path)
        self.described = metadata(self.signature_defs, self.name)

    def routes(self) -> list[Route]:
        """The routes of TensorFlow Serving's REST API for this model."""
        from starlette.routing import Route

        return [
            Route("/v1/models/{name}", self.status, methods=["GET"]),
            Route("/v1/models/{name}/versions/{version}", self.status, methods=["GET"]),
            Route("/v1/models/{name}/metadata", self.get_metadata, methods=["GET"]),
            Route(
                "/v1/models/{name}/versions/{version}/metadata", self.get_metadata, methods=["GET"]
            ),
            Route("/v1/models/{name}", self.predict, methods=["POST"]),
            Route("/v1/models/{name}/versions/{version}", self.predict, methods=["POST"]),
            Route("/monitoring/prometheus/metrics", self.get_metrics, methods=["GET"]),
        ]

    async def get_metrics(self, request: Request) -> Response:
        """GET /monitoring/prometheus/metrics: the counts so far (metrics.py)."""
        from starlette.responses import Response

        return Response(self.metrics.text(), media_type=CONTENT_TYPE)

    def not_found(self, name: str, version: str | None) -> str | None:
        """The 404 message when `name` (and `version`, None when the URL names none) is not
        what this server has, as TensorFlow Serving words it; None when it is."""
        if name == self.name and version in (None, VERSION):
            return None
        named = echoed(name)
        wanted = f"Latest({named})" if version is None else f"Specific({named}, {echoed(version)})"
        return f"Servable not found for request: {wanted}; this server has {self.name} version 1"

    async def status(self, request: Request) -> Response:
        """GET /v1/models/NAME: the state of version 1, LOADING then AVAILABLE."""
        params = request.path_params
        if message := self.not_found(params["name"], params.get("version")):
            return error(message, 404)
        from starlette.responses import JSONResponse

        state: dict[str, object] = {"version": VERSION, "state": self.state}
        state["status"] = {"error_code": "OK", "error_message": ""}
        return JSONResponse({"model_version_status": [state]})

    async def get_metadata(self, request: Request) -> Response:
        """GET /v1/models/NAME/metadata: the signatures, as TensorFlow Serving describes them."""
        params = request.path_params
        if message := self.not_found(params["name"], params.get("version")):
            return error(message, 404)
        if self.state != AVAILABLE:
            return error(LOADING_MESSAGE, 503)
        from starlette.responses import JSONResponse

        return JSONResponse(self.described)

    async def predict(self, request: Request) -> Response:
        """POST /v1/models/NAME:predict: the signature's outputs (those of "output_filter"
        when given) for the request's sessions, in the request's form (rows or columns); HTTP
        400 (413 for a body too large, 504 past --request-timeout-s) with the reason
        otherwise. A client that hangs up before its answer is dropped. Counted in the
        metrics by signature and status."""
        began, found = time.perf_counter(), dict[str, str]()
        answer = await self.predicted(request, found)
        status = HTTP_STATUS.get(answer.status_code, "UNKNOWN")
        self.metrics.request(found.get("signature", ""), status, time.perf_counter() - began)
        return answer

    async def predicted(self, request: Request, found: dict[str, str]) -> Response:
        """predict's answer; `found["signature"]` the signature, once the request names it.
        The body is read as JSON and checked, and the answer written, in a worker thread:
        never on the event loop that serves the other clients."""
        from starlette.requests import ClientDisconnect
        from starlette.responses import Response

        model, version = request.path_params["name"], request.path_params.get("version")
        method = version if version is not None else model  # "NAME:predict" or "1:predict"
        if not method.endswith(":predict"):
            return error(
                f"POST {echoed(request.url.path)}: this server answers POST .../{self.name}:predict"
            )
        version = version.removesuffix(":predict") if version is not None else None
        if message := self.not_found(model.removesuffix(":predict"), version):
            return error(message, 404)
        if self.state != AVAILABLE:
            return error(LOADING_MESSAGE, 503)
        try:
            body = await read_body(request, self.max_body)
            signature, columns, form, wanted = await asyncio.to_thread(self.parsed, body, found)
            client = request.client.host if request.client else ""
            asked = self.batchers[signature].answer(columns, client)
            outputs = await unless_gone(request, asked, self.timeout)
            if outputs is None:
                return error("the client hung up", CANCELLED)  # nobody reads it
            chosen = {key: outputs[key] for key in wanted}
            body = await asyncio.to_thread(serving_json, chosen, form)
            return Response(body, media_type="application/json")
        except TooLarge as large:
            return error(str(large), 413)
        except TooSlow as slow:
            return error(str(slow), 504)
        except BadRequest as bad:
            return error(str(bad))
        except ClientDisconnect:
            return error("the client hung up", CANCELLED)  # nobody reads it
        except Exception as failure:  # TensorFlow's errors: say what, never a traceback
            return error(first_line(failure))

    def parsed(self, body: bytes, found: dict[str, str]) -> tuple[str, Columns, str, list[str]]:
        """(signature, columns, form, outputs wanted) of a predict request's body, checked;
        `found["signature"]` the signature once it is known."""
        fields = read_json(body)
        signature, columns, form = parse_fields(fields, self.signatures, self.max_sessions)
        found["signature"] = signature
        return signature, columns, form, output_filter(fields, self.outputs[signature])


def stopping_answered(app: ASGIApp) -> ASGIApp:
    """`app` such that a request cut off by the server's stop (its grace over, or a second
    Ctrl-C) is answered {"error"} with HTTP 503 if nothing was sent yet, with no traceback."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await app(scope, receive, sending)
        except asyncio.CancelledError:
            if scope["type"] == "http" and not started:
                body = json.dumps({"error": "the server is stopping: try again"}).encode()
                headers = [(b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": body})

    return guarded
