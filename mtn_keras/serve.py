"""`python -m mtn_keras.serve --model default --port 8501`: a warm model behind TensorFlow
Serving's REST API on one machine, so that a search box or a script can call it and move to
TensorFlow Serving (docs/serving.md) without a change.

Endpoints (NAME: --name, by default the model folder's name, `default` for the bundled model):
  POST /v1/models/NAME:predict   {"signature_name": ..., "instances": [...]} (row form) or
                                 {"signature_name": ..., "inputs": {...}} (columnar form);
                                 answers {"predictions": [...]} or {"outputs": {...}}
  GET  /v1/models/NAME           the model's status: LOADING (the ports open at once, the
                                 model loads behind them; predict answers 503), AVAILABLE
  GET  /v1/models/NAME/metadata  its signatures (inputs and outputs, dtypes and shapes)
  GET  /monitoring/prometheus/metrics  requests by status and latency under TensorFlow
                                 Serving's names, the sessions of each model call
  GET  /                         a search page calling this model (or --page-backend's; its
                                 files under /page/; --no-page: none), docs/app.md
(`/versions/1` may follow NAME, as in TensorFlow Serving.) On --grpc-port (default 8500; 0:
none), TensorFlow Serving's gRPC API (tensorflow-serving-api's services): PredictionService's
Predict and GetModelMetadata, ModelService's GetModelStatus; the same checks, batches and
bounds, its errors as gRPC status codes (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED,
DEADLINE_EXCEEDED).

Requests that arrive within --batch-wait-ms of each other share one model call of up to
--max-batch sessions (rows padded with "" in front to one width; each answer cut back to its
own); a request's sessions go 8 a call while others wait, round-robin, so that a large request
does not hold a small one behind it. Each request is checked alone before it joins a call, and
a call that fails is retried request by request: no request fails for another's input. A bad
request (malformed JSON, an unknown signature or input, a wrong shape, more than
--max-sessions sessions, a query over 512 characters) gets TensorFlow Serving's
{"error": "..."} with HTTP 400, a body over --max-body-mb HTTP 413, one not answered within
--request-timeout-s HTTP 504, never a traceback; a request whose client hung up is dropped
before it is computed. "output_filter": ["suggestions", "scores"] in a request asks for only
those outputs.

One client cannot shut out the others: a model call's sessions are split between the client
addresses waiting (--client-share); a request must arrive within --read-timeout-s (REST:
headers and body; gRPC: the handshake and each call's message) and is parsed off the event
loop; one address holds at most --max-client-connections REST connections (more: HTTP 429)
and --max-client-streams gRPC calls (more: RESOURCE_EXHAUSTED), each door at most
--max-connections (REST: HTTP 503); every REST refusal is JSON {"error": ...}. SIGTERM (or
Ctrl-C) stops it within 10 s whatever the clients do, a model call in flight included.
It listens on 127.0.0.1 (this machine only) unless --host says otherwise: it has no
authentication, and the history in a request is a person's.
The options are checked, and the ports taken, before the model loads (exit 2 if one cannot be).
"""

import argparse
import asyncio
import socket
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar
from urllib.parse import urlsplit

from mtn_keras.base.xla_setup import set_up_xla
from mtn_keras.cli import add_verbose, fail, needs_tensorflow, run
from mtn_keras.serving.batching import CLIENT_SHARE
from mtn_keras.serving.connections import MAX_CLIENT_CONNECTIONS, MAX_CONNECTIONS, READ_SECONDS
from mtn_keras.serving.grpc_door import MAX_CLIENT_STREAMS
from mtn_keras.serving.page import add_page, model_url
from mtn_keras.serving.requests import MAX_SESSIONS
from mtn_keras.serving.rest import MAX_BODY_MB, make_app
from mtn_keras.serving.savedmodel import DEFAULT, SuggestError, check, model_name, resolve
from mtn_keras.serving.startup import serve

GRACE_S = 10  # after SIGTERM, how long requests in flight may take before they are cut off
Number = TypeVar("Number", int, float)  # what `bounded` reads: an int or a float


def origin(text: str) -> str:
    """A web origin as a browser sends it in its Origin header (scheme://host[:port], no path,
    no trailing slash), for --allow-origin; anything else would never match, silently."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is no web origin: give one such as https://search.example.com"
        )
    if parts.path or parts.query or parts.fragment or parts.username:
        bare = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        raise argparse.ArgumentTypeError(
            f"{text!r} is no web origin (a browser sends {bare!r}, without a path or a slash)"
        )
    return text


def page_backend(text: str) -> str:
    """A --page-backend address, checked (page.model_url); else one line saying what to give."""
    try:
        return model_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def bounded(kind: Callable[[str], Number], low: Number, high: Number) -> Callable[[str], Number]:
    """An argparse type: a number of `kind` from `low` to `high`, else one line naming both."""

    def read(text: str) -> Number:
        value: Number | None
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:  # also NaN and inf
            raise argparse.ArgumentTypeError(f"{text!r}: give a number from {low} to {high}")
        return value

    return read


# serve's numeric options, each checked against its bounds: (option, type, lowest, highest,
# default); HELP says what each is, and its help line ends with its default.
NUMBERS: tuple[tuple[str, Callable[[str], float], float, float, float], ...] = (
    ("--port", int, 1, 65535, 8501),
    ("--grpc-port", int, 0, 65535, 8500),
    ("--batch-wait-ms", float, 0, 1000, 5.0),
    ("--max-batch", int, 1, 1024, 64),
    ("--max-sessions", int, 1, 100_000, MAX_SESSIONS),
    ("--max-body-mb", float, 0.001, 1024, MAX_BODY_MB),
    ("--client-share", int, 1, 1024, CLIENT_SHARE),
    ("--read-timeout-s", float, 0.1, 3600, READ_SECONDS),
    ("--max-connections", int, 1, 1_000_000, MAX_CONNECTIONS),
    ("--max-client-connections", int, 1, 1_000_000, MAX_CLIENT_CONNECTIONS),
    ("--max-client-streams", int, 1, 100_000, MAX_CLIENT_STREAMS),
)
HELP = {
    "--port": "TensorFlow Serving's REST port",
    "--grpc-port": "TensorFlow Serving's gRPC port; 0: no gRPC",
    "--batch-wait-ms": "how long a request waits for others to share its model call",
    "--max-batch": "sessions in one model call",
    "--max-sessions": "sessions one request may hold; more get HTTP 400",
    "--max-body-mb": "a request's body in MiB; a larger one gets HTTP 413",
    "--client-share": "sessions of one model call split between the client addresses waiting, "
    "at least one each; a GPU gains from more",
    "--read-timeout-s": "a request (REST: headers and body; gRPC: the handshake, then each "
    "call's message) must arrive within it, else it is cut off",
    "--max-connections": "connections each door serves at once, fewer if the open-file limit "
    "is lower; more: REST 503, gRPC closed",
    "--max-client-connections": "REST connections one client address may hold at once; more "
    "get HTTP 429",
    "--max-client-streams": "gRPC calls one client address may have open at once, and on one "
    "connection; more get RESOURCE_EXHAUSTED",
}


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed options, each checked (argparse: one line, exit 2)."""
    parser = argparse.ArgumentParser(
        prog="python -m mtn_keras.serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default=DEFAULT, help="a SavedModel (default: the bundled)")
    parser.add_argument("--name", help="the model's name in the URL (default: its folder's)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 opens it to "
        "the network, with no authentication)",
    )
    for option, kind, low, high, default in NUMBERS:
        text = f"{HELP[option]} (default {default:g})"
        parser.add_argument(option, type=bounded(kind, low, high), default=default, help=text)
    parser.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        type=origin,
        help="let web pages of ORIGIN (e.g. https://search.example.com; repeatable) call it "
        "from a browser: CORS headers, preflight OPTIONS answered (default: none)",
    )
    parser.add_argument(
        "--request-timeout-s",
        type=bounded(float, 0.001, 3600),
        help="a predict request not answered within it gets HTTP 504 (default: no bound)",
    )
    parser.add_argument("--no-page", action="store_true", help="serve no search page at /")
    parser.add_argument(
        "--page-backend",
        metavar="URL",
        type=page_backend,
        help="the search page calls the model at URL (http://HOST:PORT/v1/models/NAME, e.g. "
        "TensorFlow Serving's; default: this server's), the one other address its CSP allows",
    )
    add_verbose(parser)
    return parser.parse_args(argv)


def listening(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, taken before the model loads; OSError names why not."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise OSError(f"--host {host}: {error.strerror}") from None
    sock = socket.socket(family, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise OSError(f"{host}:{port}: {error.strerror}") from None
    sock.listen(2048)  # connections wait in the backlog, not refused, until uvicorn accepts
    return sock


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(argv)
    path = resolve(args.model)
    try:
        check(path)
        sock = listening(args.host, args.port)
        if args.grpc_port:  # taken for a moment: an address in use is known at once
            listening(args.host, args.grpc_port).close()
    except (SuggestError, OSError) as error:
        return fail("serve", error, args.verbose)
    set_up_xla()  # before TensorFlow is imported: compilations kept on disk
    app = make_app(
        None,  # LOADING: startup.py loads it behind the open ports
        path,
        args.name or model_name(args.model),
        args.batch_wait_ms / 1000,
        args.max_batch,
        args.max_sessions,
        args.max_body_mb,
        args.allow_origin,
        args.request_timeout_s,
        args.client_share,
    )
    if not args.no_page:
        add_page(app, args.name or model_name(args.model), args.page_backend)
    prepare = partial(needs_tensorflow, "serve", args.verbose)
    try:
        return asyncio.run(serve(app, sock, args, prepare, GRACE_S))
    except (SuggestError, OSError) as error:
        return fail("serve", error, args.verbose)


if __name__ == "__main__":
    run(main, "serve")
