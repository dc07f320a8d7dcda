"""`python -m mtn_keras.serve`'s run, ready in seconds as TensorFlow Serving is: REST and gRPC
answer at once (the model LOADING, predict 503 / UNAVAILABLE), TensorFlow is imported and the
model loaded behind them in a thread, gRPC's services open once TensorFlow is in; the batch
sizes are compiled after, while requests are answered. SIGTERM or Ctrl-C stops both doors
within the same grace, even during the load."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from mtn_keras.base.xla_setup import skip_graph_rewrites
from mtn_keras.serving.batching import BATCH_SIZES
from mtn_keras.serving.connections import connections_allowed, guarded_config
from mtn_keras.serving.grpc_door import Door, grpc_server
from mtn_keras.serving.rest import AVAILABLE, ServedModel, stopping_answered

if TYPE_CHECKING:
    import argparse
    import socket

    import grpc
    import uvicorn
    from starlette.applications import Starlette

T = TypeVar("T")
STOP_MARGIN = 1.5  # seconds of the grace kept to answer the requests cut off, and to exit


def in_thread(function: Callable[..., T], *args: object) -> asyncio.Future[T]:
    """An awaitable of `function(*args)` run in a daemon thread, which the process does not
    wait for at exit: a stop during the load is not held up by it."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result: T | None, error: Exception | None) -> None:
        if future.done():  # cancelled: the server stopped
            return
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)

    def run() -> None:
        try:
            result, error = function(*args), None
        except Exception as failure:  # handed to the awaiting coroutine
            result, error = None, failure
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, daemon=True).start()
    return future


def grpc_address(host: str, port: int) -> str:
    """`host`:`port` as gRPC writes an address (an IPv6 host in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve(
    app: Starlette,
    sock: socket.socket,
    args: argparse.Namespace,
    prepare: Callable[[], int | None],
    grace: float,
) -> int:
    """Serve `app` (rest.make_app of no model yet) on `sock` and on --grpc-port while the
    model loads, until SIGTERM or Ctrl-C; then both stop within `grace` seconds. `prepare()`
    imports TensorFlow (an exit code if it cannot serve). Returns the exit code; raises the
    load's SuggestError, or gRPC's OSError before serving."""
    import uvicorn

    served, grpc, door = app.state.served, None, None
    where = f"http://{args.host}:{args.port}/v1/models/{served.name}"
    connections = connections_allowed(args.max_connections)
    if args.grpc_port:
        address = grpc_address(args.host, args.grpc_port)
        grpc, door = grpc_server(
            served.metrics,
            address,
            served.max_body,
            args.read_timeout_s,
            connections,
            args.max_client_streams,
        )
        await grpc.start()
        where += f" and grpc {address}"
    config = guarded_config(
        stopping_answered(app),
        args.read_timeout_s,
        connections,
        args.max_client_connections,
        log_level="warning",
        timeout_graceful_shutdown=max(grace - STOP_MARGIN, 0.1),
    )
    server = uvicorn.Server(config)
    stopped = asyncio.create_task(stop_with(server, grpc, grace))
    loading = asyncio.create_task(load_behind(server, served, where, prepare, door))
    for kind in (signal.SIGTERM, signal.SIGINT):  # uvicorn raises it again once REST stopped
        signal.signal(kind, lambda *_: None)  # and gRPC's grace is not cut short by it
    await server.serve(sockets=[sock])
    await stopped
    if not loading.done():  # stopped during the load, whose thread the exit leaves
        loading.cancel()
        return 0
    return loading.result()


async def load_behind(
    server: uvicorn.Server,
    served: ServedModel,
    where: str,
    prepare: Callable[[], int | None],
    door: Door | None,
) -> int:
    """Import TensorFlow, open gRPC's services on `door` (None: no gRPC), load the model and
    warm its first signature; then mark it AVAILABLE and compile the rest in the background.
    The exit code; on an error, the server told to stop and the error raised."""
    began = time.perf_counter()
    print(f"serve: {served.name} LOADING on {where}", file=sys.stderr)
    try:
        if code := await in_thread(prepare):
            server.should_exit = True
            return code
        if door is not None:
            from mtn_keras.serving.grpc_service import handlers

            door.open(handlers(served, door))
        await in_thread(load_first, served)
    except Exception:
        server.should_exit = True
        raise
    served.state = AVAILABLE
    seconds = time.perf_counter() - began
    print(f"serving {served.path} as {served.name} on {where} ({seconds:.1f} s)", file=sys.stderr)
    sizes = [size for size in BATCH_SIZES if size <= served.max_batch]
    threading.Thread(target=warm_up, args=(served, sizes), daemon=True).start()
    return 0


def load_first(served: ServedModel) -> None:
    """Load the SavedModel into `served` and call `suggest` once: its graph prepared (and its
    search compiled for one session, or read from the XLA cache) before the first request.
    Its graphs run as exported, as the app's and `suggest`'s: Grappler's rewriting made the
    first call slower (4.4 to 6.2 s against 2.5 to 2.9 s, warm cache), and its graph is
    another, so the server did not read the cache entries the app and `suggest` write."""
    from mtn_keras.base.quiet import import_tensorflow
    from mtn_keras.serving.savedmodel import load

    skip_graph_rewrites(import_tensorflow())
    loaded, _ = load(served.path, ("suggest",))
    served.ready(loaded)
    served.batchers["suggest"].warm_up((1,))


def warm_up(served: ServedModel, sizes: Iterable[int]) -> None:
    """Prepare every other signature and compile `suggest`'s batch sizes `sizes`, so that
    no client waits for them later (each 1 to 2.5 s of compiling on a CPU)."""
    for key, batcher in served.batchers.items():
        if key != "suggest":
            batcher.warm_up((1,))
    served.batchers["suggest"].warm_up([size for size in sizes if size > 1])


async def stop_with(server: uvicorn.Server, grpc: grpc.aio.Server | None, grace: float) -> None:
    """Once the REST server is told to stop, stop the gRPC server (None: none) too: requests
    in flight answered, those still running STOP_MARGIN before the grace's end cancelled
    (answered 503 or UNAVAILABLE). Whatever still runs at the grace's end (a model call in a
    worker thread, TensorFlow's teardown) does not hold the process: it exits then."""
    while not server.should_exit:
        await asyncio.sleep(0.1)
    watchdog = threading.Timer(grace - 0.5, exit_now)
    watchdog.daemon = True
    watchdog.start()
    if grpc is not None:
        await grpc.stop(max(grace - STOP_MARGIN, 0.1))


def exit_now() -> None:
    """End the process at once (exit code 0: the stop was asked for), its output flushed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
