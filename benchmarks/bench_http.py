"""`python -m mtn_keras.serve` under bounded load on the loopback address: 1, 8 and 64
concurrent clients, each sending a fixed number of one-session `suggest` requests, then it
stops; beside it, the in-process figures of bench_serving.py for the same sessions.

Why: issue 38, item 5: what HTTP, JSON and batching across clients cost against calling the
SavedModel in the process, and what one machine serves to many clients.

How: the server is started on 127.0.0.1 on a free port (its own process, as a user runs it)
and warmed (one request per batch size the clients can make it compile); each client sends
its requests one after another, each the next made-up session of bench_serving.py. Printed
per number of clients: p50 and p99 of a request as the client saw it, and sessions answered
per second (requests / the wall time of the whole load). Then the server is stopped and
bench_serving.py runs in this process's place at batches 1, 8 and 64 for --seconds each.

Issue 47 adds two loads (--isolation): a one-session request sent while a 1,000-session
request is being answered (its latency beside the same request alone), and eight honest
clients beside two hostile ones that send a request with a lone surrogate in a loop (the
honest requests that failed, of those sent).

Usage: python benchmarks/bench_http.py [--model default] [--clients 1,8,64] [--requests 20]
       python benchmarks/bench_http.py --isolation [--requests 20]
"""

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_serving import counts_of, made_up_sessions, model_parser  # noqa: E402
from serve_load import HOST, free_port, rest_load, start_server, summary  # noqa: E402


async def behind_a_large_one(url, sessions):
    """(seconds of a one-session request alone, of the same request sent 0.5 s after a
    1,000-session one, of the large one)."""
    import httpx

    async with httpx.AsyncClient(timeout=600) as http:
        small = json.dumps({"instances": [sessions[0]]})
        began = time.perf_counter()
        await http.post(url, content=small)
        alone = time.perf_counter() - began
        large_body = json.dumps(
            {"instances": list(itertools.islice(itertools.cycle(sessions), 1000))}
        )

        async def timed(body, delay):
            await asyncio.sleep(delay)
            began = time.perf_counter()
            answer = await http.post(url, content=body)
            if answer.status_code != 200:
                raise SystemExit(f"bench_http: HTTP {answer.status_code}: {answer.text[:300]}")
            return time.perf_counter() - began

        large, behind = await asyncio.gather(timed(large_body, 0), timed(small, 0.5))
    return alone, behind, large


async def beside_hostile_ones(url, sessions, requests):
    """(honest requests that failed, honest requests sent, hostile requests answered) of 8
    honest clients sending `requests` each beside 2 hostile clients looping a bad request."""
    import httpx

    hostile_body = '{"instances": [{"session": ["x\\ud800"]}]}'  # 41 bytes, a lone surrogate
    failed, hostile, stop = [], [], asyncio.Event()

    async def honest(http, offset):
        for i in range(requests):
            body = json.dumps({"instances": [sessions[(offset + i) % len(sessions)]]})
            answer = await http.post(url, content=body)
            failed.append(answer.status_code != 200)

    async def attacker(http):
        while not stop.is_set():
            answer = await http.post(url, content=hostile_body)
            hostile.append(answer.status_code)

    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=10), timeout=600) as http:
        attackers = [asyncio.create_task(attacker(http)) for _ in range(2)]
        await asyncio.gather(*(honest(http, 7 * i) for i in range(8)))
        stop.set()
        await asyncio.gather(*attackers)
    return sum(failed), len(failed), len(hostile)


def isolation(url, sessions, requests):
    """Print issue 47's two figures: fairness and a hostile client's harm."""
    alone, behind, large = asyncio.run(behind_a_large_one(url, sessions))
    print(
        f"one session alone {1000 * alone:.0f} ms; sent 0.5 s after a 1,000-session request: "
        f"{1000 * behind:.0f} ms ({behind / alone:.1f}x); the large one {large:.1f} s"
    )
    failed, sent, hostile = asyncio.run(beside_hostile_ones(url, sessions, requests))
    print(
        f"8 honest clients beside 2 hostile ones: {failed} of {sent} honest requests failed "
        f"({100 * failed / sent:.1f}%); {hostile} hostile requests refused meanwhile"
    )


def main(argv=None):
    parser = model_parser(__doc__, ("--clients", "1,8,64", "concurrent clients"))
    parser.add_argument("--requests", type=int, default=20, help="requests each client sends")
    parser.add_argument(
        "--seconds", type=float, default=15.0, help="bench_serving.py's time per batch size"
    )
    parser.add_argument(
        "--isolation",
        action="store_true",
        help="issue 47's loads: a small request behind a large one, honest beside hostile",
    )
    args = parser.parse_args(argv)
    counts = counts_of(parser, "--clients", args.clients)
    sessions = made_up_sessions()
    port = free_port()
    url = f"http://{HOST}:{port}/v1/models/mtn:predict"
    server = start_server(args.model, port)
    try:
        if args.isolation:
            asyncio.run(rest_load(url, 8, 1, sessions))
            return isolation(url, sessions, args.requests)
        # Warm up: the batch sizes the clients can make it compile (one compilation each).
        asyncio.run(rest_load(url, max(counts), 1, sessions))
        asyncio.run(rest_load(url, 1, 2, sessions))
        print(f"server on {HOST}:{port}; {len(sessions)} made-up sessions, cycled")
        for count in counts:
            latencies, wall = asyncio.run(rest_load(url, count, args.requests, sessions))
            print(f"{count:3d} clients x {args.requests} requests: {summary(latencies, wall)}")
    finally:
        server.terminate()
        server.wait(30)
    print("in process (bench_serving.py), the same sessions:", flush=True)
    from bench_serving import main as in_process

    return in_process(["--model", args.model, "--seconds", str(args.seconds)])


if __name__ == "__main__":
    raise SystemExit(main())
