"""The gRPC port of `python -m mtn_keras.serve`, bound at start as REST's is: until TensorFlow
is imported (TensorFlow Serving's protos import it), every method is answered UNAVAILABLE
"the model is loading" with no message read; then the services of grpc_service.py answer.
Its guards: a connection must finish its handshake within the read deadline and is closed
after GRPC_IDLE_SECONDS without a call, at most `max_connections` at once, at most
`client_streams` calls (HTTP/2 streams) on one connection and from one client address."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import grpc

from mtn_keras.serving.connections import Budget
from mtn_keras.serving.rest import LOADING_MESSAGE

if TYPE_CHECKING:
    from mtn_keras.serving.metrics import Metrics

PREDICT = "/tensorflow.serving.PredictionService/Predict"  # counted in the metrics as REST's
GRPC_IDLE_SECONDS = 30  # a connection without a call; a client's channel reconnects at need
MAX_CLIENT_STREAMS = 32  # calls one client address may have open at once


class Door(grpc.GenericRpcHandler):
    """Every method refused UNAVAILABLE (its request left as bytes) until `open(handlers)`
    hands it the services' own handlers; a predict refused is counted in `metrics`. Holds
    what the services' calls are guarded by: `calls` (a Budget) and `read_seconds`."""

    def __init__(self, metrics: Metrics, calls: Budget, read_seconds: float) -> None:
        self.metrics, self.calls, self.read_seconds = metrics, calls, read_seconds
        # the services' generic handlers, once their protos are imported
        self.handlers: list[grpc.GenericRpcHandler] | None = None
        self.refusal = grpc.unary_unary_rpc_method_handler(self.refuse)
        self.predict_refusal = grpc.unary_unary_rpc_method_handler(self.refuse_predict)

    def open(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        """Serve the methods of `handlers` (grpc.GenericRpcHandler) from now on."""
        self.handlers = list(handlers)

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        """The handler of a call's method: the services' once open, else the refusal."""
        if self.handlers is None:
            return self.predict_refusal if handler_call_details.method == PREDICT else self.refusal
        for handler in self.handlers:
            found = handler.service(handler_call_details)
            if found is not None:
                return found
        return None  # a method no service has: gRPC answers UNIMPLEMENTED

    async def refuse(self, request: bytes, context: grpc.aio.ServicerContext) -> None:
        """UNAVAILABLE in one line, as TensorFlow Serving answers while a model loads."""
        await context.abort(grpc.StatusCode.UNAVAILABLE, LOADING_MESSAGE)

    async def refuse_predict(self, request: bytes, context: grpc.aio.ServicerContext) -> None:
        """A predict refused as `refuse` does, counted as REST counts its 503 (its request
        unread: signature "unknown", no time spent)."""
        self.metrics.request("", "UNAVAILABLE", 0.0, "GRPC")
        await self.refuse(request, context)


def grpc_server(
    metrics: Metrics,
    address: str,
    max_bytes: int,
    read_seconds: float,
    max_connections: int,
    client_streams: int = MAX_CLIENT_STREAMS,
) -> tuple[grpc.aio.Server, Door]:
    """(A gRPC server (grpc.aio; to start in the REST server's event loop), its Door) bound
    to `address` ("host:port"; OSError if it cannot be), refusing messages over `max_bytes`
    (RESOURCE_EXHAUSTED), guarded as this module says; predicts refused while loading
    counted in `metrics`."""
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),  # an address in use is an error, not a second listener
            ("grpc.max_receive_message_length", max_bytes),
            ("grpc.server_handshake_timeout_ms", int(read_seconds * 1000)),
            ("grpc.max_connection_idle_ms", GRPC_IDLE_SECONDS * 1000),
            ("grpc.max_allowed_incoming_connections", max_connections),
            ("grpc.max_concurrent_streams", client_streams),
        ]
    )
    calls = Budget(max_connections, client_streams, "calls", "--max-client-streams")
    door = Door(metrics, calls, read_seconds)
    server.add_generic_rpc_handlers((door,))
    try:
        server.add_insecure_port(address)
    except RuntimeError:
        raise OSError(f"{address}: cannot listen there (in use, or no such address)") from None
    return server, door
