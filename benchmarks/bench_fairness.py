"""One client against everyone: an honest client's latency on both doors of `python -m
mtn_keras.serve` beside a hostile client, as a ratio of its own idle latency.

Why: a client that holds 300 idle connections, drips 300 requests a byte a second, or keeps
1,500 gRPC calls open on one channel must not shut out the others: the honest client's p50
should stay within 2 x its idle p50 on both doors.

How: one server of the bundled model on 127.0.0.1 (its default options), warmed until its
background compilations are done. The honest client (this process, from 127.0.0.1) sends
--requests one-session `suggest` requests one after another through REST, then through gRPC.
The hostile client runs in a process of its own from another address, 127.0.0.2 (its REST
connections bound there; its gRPC channel through a forwarder that connects from there):
  idle     300 TCP connections to the REST port that send nothing, reopened when closed;
  drip     300 connections that send a request's bytes one a second, reopened when closed;
  streams  one gRPC channel with 1,500 `suggest` calls open at once, each replaced when done.
Printed: the idle reference, then per load the honest p50 and p90 on each door and the p50's
ratio to the idle one, all measured in this one run.

Usage: PYTHONPATH=. python benchmarks/bench_fairness.py [--model default] [--requests 30]
       [--loads idle,drip,streams]
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from serve_load import HOST, free_port, start_server  # noqa: E402

HOSTILE = "127.0.0.2"  # the hostile client's address: the server tells the two apart by it
SESSION = ["cheap flights", "rome hotels"]
CONNECTIONS, STREAMS = 300, 1500


def body():
    return json.dumps({"signature_name": "suggest", "instances": [SESSION]}).encode()


async def hold(port, what):
    """Keep CONNECTIONS connections from HOSTILE to `port`, each sending the bytes of a
    request one a second (`what` "drip") or nothing ("idle"); one closed is opened again."""
    request = b"POST /v1/models/mtn:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 999\r\n\r\n"

    async def one():
        while True:
            try:
                reader, writer = await asyncio.open_connection(HOST, port, local_addr=(HOSTILE, 0))
                for byte in request * 100 if what == "drip" else []:
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(1)
                await reader.read()  # until the server closes it
                writer.close()
            except OSError:
                await asyncio.sleep(0.1)

    await asyncio.gather(*(one() for _ in range(CONNECTIONS)))


async def forward(target_port):
    """A forwarder on a free port of HOST that connects to `target_port` from HOSTILE; its port."""

    async def pump(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def joined(reader, writer):
        up_reader, up_writer = await asyncio.open_connection(
            HOST, target_port, local_addr=(HOSTILE, 0)
        )
        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))

    server = await asyncio.start_server(joined, HOST, 0)
    return server.sockets[0].getsockname()[1]


async def streams(grpc_port):
    """STREAMS `suggest` calls open at once on one gRPC channel from HOSTILE, each replaced
    as soon as it is answered or refused."""
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    port = await forward(grpc_port)
    request = suggest_request()
    async with grpc.aio.insecure_channel(f"{HOST}:{port}") as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)

        async def one():
            while True:
                try:
                    await stub.Predict(request, timeout=600)
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.01)

        await asyncio.gather(*(one() for _ in range(STREAMS)))


def suggest_request():
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name, request.model_spec.signature_name = "mtn", "suggest"
    request.inputs["session"].CopyFrom(tf.make_tensor_proto([SESSION]))
    return request


async def honest(port, grpc_port, requests):
    """(REST latencies, gRPC latencies) in seconds of `requests` one-session requests each,
    one after another, from HOST."""
    import grpc
    import httpx
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    rest, remote = [], []
    async with httpx.AsyncClient(timeout=600) as http:
        for _ in range(requests):
            began = time.perf_counter()
            answer = await http.post(f"http://{HOST}:{port}/v1/models/mtn:predict", content=body())
            rest.append(time.perf_counter() - began)
            if answer.status_code != 200:
                raise SystemExit(f"REST {answer.status_code}: {answer.text[:300]}")
    async with grpc.aio.insecure_channel(f"{HOST}:{grpc_port}") as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        for _ in range(requests):
            began = time.perf_counter()
            await stub.Predict(suggest_request(), timeout=600)
            remote.append(time.perf_counter() - began)
    return rest, remote


def quiet(pid, below=0.1, longest=600):
    """Wait until process `pid` uses under `below` of a core for 2 s (its background
    compilations done), at most `longest` seconds."""
    ticks = os.sysconf("SC_CLK_TCK")

    def used():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    until = time.monotonic() + longest
    while time.monotonic() < until:
        before = used()
        time.sleep(2)
        if used() - before < 2 * below:
            return


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def line(name, rest, remote, reference):
    """One printed row: a load's honest p50 / p90 on each door and the p50's ratio to idle."""
    cells = [name]
    for latencies, idle in ((rest, reference[0]), (remote, reference[1])):
        p50 = statistics.median(latencies)
        cells.append(
            f"{1000 * p50:.0f} / {1000 * percentile(latencies, 0.9):.0f} ms "
            f"({p50 / statistics.median(idle):.2f}x)"
        )
    return "| " + " | ".join(cells) + " |"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--loads", default="idle,drip,streams")
    parser.add_argument("--hostile", help=argparse.SUPPRESS)  # the hostile process's own
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.hostile:
        port, grpc_port = (int(part) for part in args.ports.split(","))
        load = streams(grpc_port) if args.hostile == "streams" else hold(port, args.hostile)
        asyncio.run(load)
        return
    port, grpc_port = free_port(), free_port()
    server = start_server(args.model, port, grpc_port)
    try:
        asyncio.run(honest(port, grpc_port, 3))  # both doors' first calls
        quiet(server.pid)
        reference = asyncio.run(honest(port, grpc_port, args.requests))
        print("| load | REST p50 / p90 (p50 / idle p50) | gRPC p50 / p90 (p50 / idle p50) |")
        print("| --- | --- | --- |")
        print(line("none (the idle reference)", *reference, reference), flush=True)
        for load in args.loads.split(","):
            hostile = subprocess.Popen(
                [sys.executable, __file__, "--hostile", load, "--ports", f"{port},{grpc_port}"],
                cwd=ROOT,
            )
            time.sleep(10)  # its connections or calls in place
            try:
                name = {
                    "idle": f"{CONNECTIONS} idle REST connections",
                    "drip": f"{CONNECTIONS} REST connections dripping a byte a second",
                    "streams": f"{STREAMS} gRPC calls open on one channel",
                }[load]
                print(line(name, *asyncio.run(honest(port, grpc_port, args.requests)), reference))
            finally:
                hostile.kill()
                hostile.wait()
            quiet(server.pid)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
