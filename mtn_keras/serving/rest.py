"""TensorFlow Serving's REST API over a loaded SavedModel, as a Starlette app: requests parsed
and checked, sessions of concurrent requests batched into one call, answers in row or
columnar form. `python -m mtn_keras.serve` runs it under uvicorn."""

import asyncio
import base64
import json
import time
from pathlib import Path

import numpy as np

from mtn_keras.serving.savedmodel import DEFAULT

# The sessions one request may hold: 10,000 would take minutes on a CPU; a client splits them.
MAX_SESSIONS = 1000
# Which axes of an output count the session's query slots (S'), cut back per request.
SLOT_AXES = {
    "copy_attention": (2,),
    "source_tokens": (1,),
    "session_attention": (3, 4),
    "attention": (3, 4),
    "queries": (1,),
}
INPUT_RANKS = {"session": 2, "prefix": 1, "history": 2}  # the contract's inputs
# The batch sizes of a model call (TensorFlow Serving's allowed_batch_sizes): a call is padded
# with empty sessions to the next one, so XLA compiles the search for these few sizes (at
# start, see warm_up) instead of once for every size that clients happen to make (each took
# 1 to 2.5 s, and held every request behind it). Above the largest, the graph's chunks of 64.
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)


class BadRequest(Exception):
    """A request the model cannot answer; the message (one line) goes back with HTTP 400."""


def strings(value, rank, where):
    """`value` (nested lists of strings, or {"b64": ...} objects) as nested lists of str of
    `rank`; rows of a rank-2 value may differ in length (padded later)."""
    if rank == 0:
        if isinstance(value, dict) and set(value) == {"b64"}:
            try:
                return base64.b64decode(value["b64"], validate=True).decode("utf-8")
            except ValueError as error:
                raise BadRequest(f"{where}: not base64 of UTF-8 text ({error})") from None
        if not isinstance(value, str):
            raise BadRequest(f"{where} must be a string, not {type(value).__name__}")
        return value
    if not isinstance(value, list):
        raise BadRequest(f"{where} must be a list (rank {rank}), not {type(value).__name__}")
    return [strings(item, rank - 1, f"{where}[{i}]") for i, item in enumerate(value)]


def front_padded(rows, width):
    """Rows of strings padded with "" in front to `width` ("" padding is allowed anywhere in
    a session or a history, and the graph right-aligns the queries itself)."""
    return [[""] * (width - len(row)) + row for row in rows]


def parse_request(body, signatures, max_sessions):
    """(signature name, {input: rows}, "row" or "columnar") of a predict request's JSON."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    if not isinstance(request, dict):
        raise BadRequest('the body must be a JSON object with "instances" or "inputs"')
    name = request.get("signature_name", "serving_default")
    if name not in signatures:
        raise BadRequest(
            f"no signature {name!r} (signature_name); this model has {', '.join(signatures)}"
        )
    expected = signatures[name]
    if ("instances" in request) == ("inputs" in request):
        raise BadRequest('give exactly one of "instances" (row form) and "inputs" (columnar form)')
    if "instances" in request:
        form, instances = "row", request["instances"]
        if not isinstance(instances, list):
            raise BadRequest('"instances" must be a list, one entry a session')
        if len(expected) == 1 and not all(isinstance(item, dict) for item in instances):
            instances = [{expected[0]: item} for item in instances]
        columns = {key: [] for key in expected}  # no instances: a batch of no sessions
        for i, item in enumerate(instances):
            if not isinstance(item, dict):
                raise BadRequest(f"instances[{i}] must be an object of {', '.join(expected)}")
            check_names(item, expected, f"instances[{i}]")
            for key in expected:
                rank = INPUT_RANKS[key] - 1
                columns[key].append(strings(item[key], rank, f"instances[{i}].{key}"))
    else:
        form, inputs = "columnar", request["inputs"]
        if not isinstance(inputs, dict):
            if len(expected) != 1:
                raise BadRequest(f'"inputs" must be an object of {", ".join(expected)}')
            inputs = {expected[0]: inputs}
        check_names(inputs, expected, '"inputs"')
        columns = {key: strings(inputs[key], INPUT_RANKS[key], key) for key in expected}
    sizes = {key: len(rows) for key, rows in columns.items()}
    if len(set(sizes.values())) > 1:
        raise BadRequest(f"every input needs one row per session; got {sizes}")
    batch = next(iter(sizes.values()), 0)
    if batch > max_sessions:
        raise BadRequest(
            f"{batch} sessions in one request; at most {max_sessions} (--max-sessions): "
            "send them in several requests"
        )
    return name, columns, form


def check_names(given, expected, where):
    """A BadRequest naming the inputs of `where` that the signature lacks or that are missing."""
    unknown = sorted(set(given) - set(expected))
    missing = [key for key in expected if key not in given]
    if unknown or missing:
        raise BadRequest(
            f"{where}: the signature takes {', '.join(expected)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )


def as_json(value):
    """A numpy output as JSON values: bytes as UTF-8 text, floats as floats (-inf as
    -Infinity, as TensorFlow Serving writes it)."""
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return np.char.decode(value.astype(bytes), "utf-8", "replace").tolist()
    return value.tolist()


class Batcher:
    """Requests for one signature, answered together: the first waits up to `wait` seconds for
    others, then one model call (in a worker thread) answers up to `max_batch` sessions."""

    def __init__(self, function, names, wait, max_batch):
        self.function, self.names = function, names
        self.wait, self.max_batch = wait, max_batch
        self.queue = asyncio.Queue()
        self.task = None

    async def answer(self, columns):
        """The outputs (numpy arrays) for one request's columns."""
        if self.task is None or self.task.done():  # first request, or a loop that failed
            self.task = asyncio.create_task(self.run())
        done = asyncio.get_running_loop().create_future()
        await self.queue.put((columns, done))
        return await done

    async def run(self):
        while True:
            waiting = [await self.queue.get()]
            deadline = time.monotonic() + self.wait
            while sum(len(c["session"]) for c, _ in waiting) < self.max_batch:
                try:
                    waiting.append(
                        await asyncio.wait_for(self.queue.get(), deadline - time.monotonic())
                    )
                except TimeoutError:
                    break
            try:
                answers = await asyncio.to_thread(self.call, [c for c, _ in waiting])
            except Exception as error:  # TensorFlow raises many types; each request hears it
                answers = [error] * len(waiting)
            for (_, done), answer in zip(waiting, answers):
                if done.done():  # the client hung up
                    continue
                if isinstance(answer, Exception):
                    done.set_exception(answer)
                else:
                    done.set_result(answer)

    def warm_up(self, sizes=(1,)):
        """One call at each batch size of `sizes`: the first call of a signature prepares its
        graph and each new size compiles the search, which no client should wait for."""
        for size in sizes:
            empty = {
                key: [[]] * size if INPUT_RANKS[key] == 2 else [""] * size for key in self.names
            }
            self.call([empty])

    def call(self, requests):
        """One model call for `requests` (their columns), split back per request."""
        import tensorflow as tf

        widths = {
            key: max((len(row) for c in requests for row in c[key]), default=0)
            for key in self.names
            if INPUT_RANKS[key] == 2
        }
        sessions = sum(len(c["session"]) for c in requests)
        padding = next((size for size in BATCH_SIZES if size >= sessions), sessions) - sessions
        inputs = {}
        for key in self.names:
            rows = [row for c in requests for row in c[key]]
            rows += [[] if key in widths else ""] * padding
            if key in widths:
                rows = front_padded(rows, widths[key])
                inputs[key] = tf.constant(rows, tf.string, [len(rows), widths[key]])
            else:
                inputs[key] = tf.constant(rows, tf.string, [len(rows)])
        out = {key: value.numpy() for key, value in self.function(**inputs).items()}
        answers, start = [], 0
        for request in requests:
            size = len(request["session"])
            own = max(max((len(row) for row in request["session"]), default=0), 1)
            answer = {}
            for key, value in out.items():
                value = value[start : start + size]
                for axis in SLOT_AXES.get(key, ()):
                    slots = min(own + 1, value.shape[axis])
                    value = np.take(
                        value, range(value.shape[axis] - slots, value.shape[axis]), axis
                    )
                answer[key] = value
            answers.append(answer)
            start += size
        return answers


def response(outputs, form):
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


def metadata(path, name):
    """GET .../metadata: the SignatureDefs of saved_model.pb as TensorFlow Serving gives them."""
    from google.protobuf.json_format import MessageToDict
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel()
    model.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    defs = {
        key: MessageToDict(value)
        for key, value in model.meta_graphs[0].signature_def.items()
        if not key.startswith("__")
    }
    return {
        "model_spec": {"name": name, "signature_name": "", "version": "1"},
        "metadata": {"signature_def": {"signature_def": defs}},
    }


def make_app(loaded, path, name, wait=0.005, max_batch=64, max_sessions=MAX_SESSIONS):
    """The Starlette app serving the loaded SavedModel at `path` as model `name`."""
    from starlette.applications import Starlette

    served = ServedModel(loaded, path, name, wait, max_batch, max_sessions)
    app = Starlette(routes=served.routes())
    app.state.batchers = served.batchers  # one per signature, to look at in tests
    return app


def serving_json(content):
    """JSON as TensorFlow Serving writes it: -inf (the score of an empty slot) as -Infinity,
    which Python's json reads and a strict parser (JavaScript's) does not."""
    from starlette.responses import Response

    body = json.dumps(content, ensure_ascii=False, allow_nan=True).encode("utf-8")
    return Response(body, media_type="application/json")


def error(message, status=400):
    """An error answer: {"error": message} with the HTTP `status`."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


class ServedModel:
    """The REST endpoints of one loaded SavedModel served as model `name`: its status, its
    metadata and `:predict`, each signature's requests batched (Batcher)."""

    def __init__(self, loaded, path, name, wait, max_batch, max_sessions):
        self.name, self.max_sessions = name, max_sessions
        self.signatures = {
            key: sorted(fn.structured_input_signature[1], key=list(INPUT_RANKS).index)
            for key, fn in loaded.signatures.items()
        }
        self.batchers = {
            key: Batcher(loaded.signatures[key], names, wait, max_batch)
            for key, names in self.signatures.items()
        }
        self.described = metadata(path, name)

    def routes(self):
        """The routes of TensorFlow Serving's REST API for this model."""
        from starlette.routing import Route

        return [
            Route("/v1/models/{name}", self.status, methods=["GET"]),
            Route("/v1/models/{name}/versions/1", self.status, methods=["GET"]),
            Route("/v1/models/{name}/metadata", self.get_metadata, methods=["GET"]),
            Route("/v1/models/{name}/versions/1/metadata", self.get_metadata, methods=["GET"]),
            Route("/v1/models/{name}", self.predict, methods=["POST"]),
            Route("/v1/models/{name}/versions/{version}", self.predict, methods=["POST"]),
        ]

    def unknown(self, request):
        """The message of a request for a model this server does not have."""
        given = request.path_params["name"]
        return f"Servable not found for request: Latest({given}); this server has {self.name}"

    async def status(self, request):
        """GET /v1/models/NAME: the model is available (version 1)."""
        if request.path_params["name"] != self.name:
            return error(self.unknown(request), 404)
        from starlette.responses import JSONResponse

        state = {"version": "1", "state": "AVAILABLE"}
        state["status"] = {"error_code": "OK", "error_message": ""}
        return JSONResponse({"model_version_status": [state]})

    async def get_metadata(self, request):
        """GET /v1/models/NAME/metadata: the signatures, as TensorFlow Serving describes them."""
        if request.path_params["name"] != self.name:
            return error(self.unknown(request), 404)
        from starlette.responses import JSONResponse

        return JSONResponse(self.described)

    async def predict(self, request):
        """POST /v1/models/NAME:predict: the signature's outputs for the request's sessions,
        in the request's form (rows or columns); HTTP 400 with the reason otherwise."""
        from starlette.requests import ClientDisconnect

        model = request.path_params["name"]
        method = request.path_params.get("version", model)  # "NAME:predict" or "1:predict"
        if not method.endswith(":predict"):
            return error(
                f"POST {request.url.path}: this server answers POST .../{self.name}:predict"
            )
        if model.removesuffix(":predict") != self.name:
            return error(self.unknown(request).replace(":predict", ""), 404)
        try:
            body = await request.body()
            signature, columns, form = parse_request(body, self.signatures, self.max_sessions)
            outputs = await self.batchers[signature].answer(columns)
            return serving_json(response(outputs, form))
        except BadRequest as bad:
            return error(str(bad))
        except ClientDisconnect:
            return error("the client hung up")  # nobody reads it
        except Exception as failure:  # TensorFlow's errors: say what, never a traceback
            message = getattr(failure, "message", None) or str(failure)
            return error(message.strip().splitlines()[0] if message.strip() else repr(failure))


def default_name(model):
    """The model's name in the URL: `default` for the bundled model, else its folder's."""
    if str(model) == DEFAULT:
        return DEFAULT
    path = Path(model).expanduser().resolve()
    return path.parent.name if path.name == "savedmodel" else path.name
