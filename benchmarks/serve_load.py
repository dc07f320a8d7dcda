"""What bench_http.py and bench_grpc.py share: a `python -m mtn_keras.serve` on the loopback
address, waited for until AVAILABLE, and clients loading its REST door with `suggest`."""

import asyncio
import itertools
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_serving import percentile

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"  # never another address: the load stays on this machine


def free_port():
    """A TCP port free on HOST now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def start_server(model, port, grpc_port=0):
    """The server's process (REST on `port`, gRPC on `grpc_port`, 0: none), once its status
    says AVAILABLE: the ports open at once, the model loads behind them."""
    import httpx

    server = subprocess.Popen(
        [sys.executable, "-m", "mtn_keras.serve", "--model", model, "--name", "mtn"]
        + ["--host", HOST, "--port", str(port), "--grpc-port", str(grpc_port)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    until = time.monotonic() + 300
    while time.monotonic() < until:
        if server.poll() is not None:
            raise SystemExit(f"the server stopped: {server.stderr.read()[-1500:]}")
        try:
            status = httpx.get(f"http://{HOST}:{port}/v1/models/mtn", timeout=1).json()
            if status["model_version_status"][0]["state"] == "AVAILABLE":
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.kill()
    raise SystemExit("the server did not answer within 300 s")


async def rest_load(url, clients, requests, sessions):
    """(latencies in seconds, wall seconds) of `clients` REST clients sending `requests`
    one-session `suggest` requests each, one after another, the sessions cycled."""
    import httpx

    pool = itertools.cycle(sessions)
    latencies = []

    async def client(http):
        for _ in range(requests):
            body = json.dumps({"signature_name": "suggest", "instances": [next(pool)]})
            began = time.perf_counter()
            answer = await http.post(url, content=body)
            latencies.append(time.perf_counter() - began)
            if answer.status_code != 200:
                raise SystemExit(f"HTTP {answer.status_code}: {answer.text[:300]}")

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=600) as http:
        began = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        return latencies, time.perf_counter() - began


def summary(latencies, wall):
    """p50, p99 and sessions per second of a load, in one line's words."""
    return (
        f"p50 {1000 * statistics.median(latencies):.0f} ms, p99 "
        f"{1000 * percentile(latencies, 0.99):.0f} ms; {len(latencies) / wall:.0f} sessions/s"
    )
