"""`python -m mtn_keras.serve` under bounded load through both its doors, TensorFlow Serving's
gRPC API and its REST API, from 1, 8 and 64 concurrent clients of bench_http.py's sessions.

Why: issue 60, item 5: a TensorFlow Serving client mostly calls gRPC; its throughput at 8
clients should be at least REST's, on the same server.

How: one server is started on 127.0.0.1 with both ports and warmed (as bench_http.py does);
for each number of clients, each client sends --requests one-session `suggest` requests one
after another, through REST (httpx, as bench_http.py) and through gRPC (one channel, the
tensorflow-serving-api stub, as a TensorFlow Serving user writes it), the two doors
alternating round by round (--rounds), so that both see the same machine. Printed per door
and number of clients: p50 and p99 of a request as the client saw it (all rounds), and the
median over rounds of sessions answered per second.

Usage: python benchmarks/bench_grpc.py [--model default] [--clients 1,8,64] [--requests 20]
       [--rounds 3]
"""

import asyncio
import itertools
import statistics
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_serving import counts_of, made_up_sessions, model_parser  # noqa: E402
from serve_load import HOST, free_port, rest_load, start_server, summary  # noqa: E402

from mtn_keras.base.quiet import import_tensorflow  # noqa: E402


def suggest_request(session):
    """A PredictRequest of `suggest` for one session, as a TensorFlow Serving client builds it."""
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "mtn", "suggest"
    request.inputs["session"].CopyFrom(tf.make_tensor_proto([session]))
    return request


async def grpc_load(address, clients, requests, sessions):
    """(latencies in seconds, wall seconds) of `clients` gRPC clients on one channel sending
    `requests` one-session `suggest` requests each, one after another, the sessions cycled."""
    import grpc

    import_tensorflow()  # quietly, before the protos import it loudly
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    pool = itertools.cycle(sessions)
    latencies = []

    async def client(stub):
        for _ in range(requests):
            request = suggest_request(next(pool))
            began = time.perf_counter()
            try:
                await stub.Predict(request, timeout=600)
            except grpc.aio.AioRpcError as error:
                raise SystemExit(f"gRPC {error.code().name}: {error.details()[:300]}") from None
            latencies.append(time.perf_counter() - began)

    async with grpc.aio.insecure_channel(address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        began = time.perf_counter()
        await asyncio.gather(*(client(stub) for _ in range(clients)))
        return latencies, time.perf_counter() - began


def main(argv=None):
    parser = model_parser(__doc__, ("--clients", "1,8,64", "concurrent clients"))
    parser.add_argument("--requests", type=int, default=20, help="requests each client sends")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each door, alternating")
    args = parser.parse_args(argv)
    counts = counts_of(parser, "--clients", args.clients)
    if args.requests < 1 or args.rounds < 1:
        parser.error("--requests and --rounds: give whole numbers from 1")
    sessions = made_up_sessions()
    rest_port, grpc_port = free_port(), free_port()
    doors = {
        "REST": partial(rest_load, f"http://{HOST}:{rest_port}/v1/models/mtn:predict"),
        "gRPC": partial(grpc_load, f"{HOST}:{grpc_port}"),
    }
    server = start_server(args.model, rest_port, grpc_port)
    try:
        for load in doors.values():  # warm up: the batch sizes the clients can make it compile
            asyncio.run(load(max(counts), 1, sessions))
            asyncio.run(load(1, 2, sessions))
        print(f"server on {HOST}: REST {rest_port}, gRPC {grpc_port}; {len(sessions)} sessions")
        for count in counts:
            runs = {door: [] for door in doors}
            for round_ in range(args.rounds):
                order = list(doors) if round_ % 2 == 0 else list(doors)[::-1]
                for door in order:
                    runs[door].append(asyncio.run(doors[door](count, args.requests, sessions)))
            for door, found in runs.items():
                latencies = [seconds for run, _ in found for seconds in run]
                rate = statistics.median(len(run) / wall for run, wall in found)
                print(
                    f"{door:4s} {count:3d} clients x {args.requests} requests x {args.rounds} "
                    f"rounds: {summary(latencies, sum(wall for _, wall in found))} "
                    f"(median of rounds {rate:.0f})"
                )
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
