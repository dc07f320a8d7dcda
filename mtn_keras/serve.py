"""`python -m mtn_keras.serve --model default --port 8501`: a warm model behind TensorFlow
Serving's REST API on one machine, so that a search box or a script can call it and move to
TensorFlow Serving (docs/serving.md) without a change.

Endpoints (NAME: --name, by default the model folder's name, `default` for the bundled model):
  POST /v1/models/NAME:predict   {"signature_name": ..., "instances": [...]} (row form) or
                                 {"signature_name": ..., "inputs": {...}} (columnar form);
                                 answers {"predictions": [...]} or {"outputs": {...}}
  GET  /v1/models/NAME           the model's status
  GET  /v1/models/NAME/metadata  its signatures (inputs and outputs, dtypes and shapes)
(`/versions/1` may follow NAME, as in TensorFlow Serving.)

Requests that arrive within --batch-wait-ms of each other share one model call, joined until
it holds --max-batch sessions (rows padded with "" in front to one width; each answer cut back
to its own; the graph answers a call in chunks of 64 sessions). A bad request (malformed JSON,
an unknown signature or input, a wrong shape, more than --max-sessions sessions) gets
TensorFlow Serving's {"error": "..."} with HTTP 400, never a traceback. It listens on
127.0.0.1 (this machine only) unless --host says otherwise: it has no authentication, and the
history in a request is a person's.
"""

import argparse
import sys

from mtn_keras.base.xla_setup import set_up_xla
from mtn_keras.cli import add_verbose, fail, needs_tensorflow, run
from mtn_keras.serving.rest import (
    BATCH_SIZES,
    MAX_SESSIONS,
    default_name,
    make_app,
)
from mtn_keras.serving.savedmodel import DEFAULT, SavedModelError, check, resolve


def main(argv=None):
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
    parser.add_argument("--port", type=int, default=8501, help="TensorFlow Serving's REST port")
    parser.add_argument(
        "--batch-wait-ms",
        type=float,
        default=5.0,
        help="how long a request waits for others to share its model call (default 5)",
    )
    parser.add_argument(
        "--max-batch", type=int, default=64, help="sessions in one model call (default 64)"
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=MAX_SESSIONS,
        help=f"sessions one request may hold; more get HTTP 400 (default {MAX_SESSIONS})",
    )
    add_verbose(parser)
    args = parser.parse_args(argv)
    path = resolve(args.model)
    try:
        check(path)
    except SavedModelError as error:
        return fail("serve", error, args.verbose)
    set_up_xla()  # before TensorFlow is imported: compilations kept on disk
    if code := needs_tensorflow("serve", args.verbose):
        return code
    import uvicorn

    from mtn_keras.serving.savedmodel import load

    try:
        loaded, _ = load(path, ("suggest",))
    except SavedModelError as error:
        return fail("serve", error, args.verbose)
    name = args.name or default_name(args.model)
    app = make_app(loaded, path, name, args.batch_wait_ms / 1000, args.max_batch, args.max_sessions)
    print("preparing the signatures and compiling the search's batch sizes...", file=sys.stderr)
    sizes = [size for size in BATCH_SIZES if size <= args.max_batch]
    for key, batcher in app.state.batchers.items():
        batcher.warm_up(sizes if key == "suggest" else (1,))
    print(
        f"serving {path} as {name} on http://{args.host}:{args.port}/v1/models/{name}",
        file=sys.stderr,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    run(main, "serve")
