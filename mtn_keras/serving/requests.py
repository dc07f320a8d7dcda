"""A predict request of TensorFlow Serving's REST API read and checked on its own, before it
joins a batch: its JSON, its signature and inputs, and the server's bounds on its size, so
that a bad request is refused alone (HTTP 400) and never fails the requests batched with it.
The refusals of both doors (REST's and gRPC's) are here too: too large, too slow, and a failed
model call in one line."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

if TYPE_CHECKING:
    from starlette.requests import Request

# The sessions one request may hold: 10,000 would take minutes on a CPU; a client splits them.
MAX_SESSIONS = 1000
MAX_QUERY_CHARS = 512  # one query, prefix or history entry (the app's store cuts at 512 too)
MAX_ROW = 1000  # the queries of one session or one history (the model reads the last few)
INPUT_RANKS = {"session": 2, "prefix": 1, "history": 2}  # the contract's inputs
SHOWN_CHARS = 60  # how much of a client's text an error message repeats
SHOWN_NAMES = 5  # how many of a request's unknown names an error message repeats
T = TypeVar("T")
# A request's rows by input name: a str each for a rank-1 input (prefix), a list of str each
# for a rank-2 one (session, history).
Columns: TypeAlias = dict[str, list[str] | list[list[str]]]


class BadRequest(Exception):
    """A request the model cannot answer; the message (one line) goes back with HTTP 400."""


class TooLarge(Exception):
    """A body over the server's bound; answered with HTTP 413."""


class TooSlow(Exception):
    """A request not answered within the server's --request-timeout-s; HTTP 504."""


def too_slow(timeout: float) -> TooSlow:
    """The TooSlow of a request not answered within `timeout` seconds, saying what to do."""
    return TooSlow(f"no answer within {timeout:g} s (--request-timeout-s): try again")


def first_line(failure: BaseException) -> str:
    """What a failed model call says, in one line (a TensorFlow error's `message`, its first
    line), never a traceback: REST's 400 and gRPC's INVALID_ARGUMENT alike."""
    message = (getattr(failure, "message", None) or str(failure)).strip()
    return message.splitlines()[0] if message else repr(failure)


async def unless_gone(
    request: Request, answer: Awaitable[T], timeout: float | None = None
) -> T | None:
    """What `answer` gives, or None if the client of `request` (whose body is read) hung up
    first; TooSlow once `timeout` seconds pass (None: no bound). Either way `answer` is
    cancelled: a request's sessions not yet computed are dropped."""
    answered = asyncio.ensure_future(answer)
    gone = asyncio.ensure_future(client_gone(request))
    try:
        done, _ = await asyncio.wait(
            {answered, gone}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        gone.cancel()
        if not answered.done():
            answered.cancel()
    if not done:  # nothing done: `timeout` seconds passed (so there is one)
        assert timeout is not None
        raise too_slow(timeout)
    return answered.result() if answered.done() and not answered.cancelled() else None


async def client_gone(request: Request) -> None:
    """Returns when the client of `request` (whose body is read) hangs up."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (TooLarge) as soon as it is known to pass `limit` bytes:
    by its Content-Length before any of it is read, else while it streams in."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the body has {int(declared):,} bytes; at most {limit:,} (--max-body-mb)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"the body passes {limit:,} bytes (--max-body-mb)")
        chunks.append(chunk)
    return b"".join(chunks)


def echoed(text: object) -> str:
    """`text` as an error message may repeat it: lone surrogates and control characters
    escaped (a JSON answer must encode it, on one line), cut to SHOWN_CHARS."""
    text = str(text)
    cut = text[:SHOWN_CHARS] + ("..." if len(text) > SHOWN_CHARS else "")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)


def listed(names: Iterable[object]) -> str:
    """Names a client sent, as an error message repeats them: the first SHOWN_NAMES in order,
    each escaped and cut (`echoed`), then how many more, so the message stays one short line."""
    ordered = sorted(str(name) for name in names)
    more = len(ordered) - SHOWN_NAMES
    named = ", ".join(f"'{echoed(name)}'" for name in ordered[:SHOWN_NAMES])
    return named + (f" and {more:,} more" if more > 0 else "")


def text(value: object, where: str) -> str:
    """A string of the request: JSON text or {"b64": ...}, valid Unicode (no lone surrogate),
    at most MAX_QUERY_CHARS characters."""
    if isinstance(value, dict) and set(value) == {"b64"}:
        if not isinstance(value["b64"], str):
            raise BadRequest(f"{where}.b64 must be a string of base64")
        try:
            value = base64.b64decode(value["b64"], validate=True).decode("utf-8")
        except ValueError:
            raise BadRequest(f"{where}: not base64 of UTF-8 text") from None
    if not isinstance(value, str):
        raise BadRequest(f"{where} must be a string, not {json_type(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise BadRequest(
            f"{where}: not valid text (a lone surrogate at character {error.start})"
        ) from None
    if len(value) > MAX_QUERY_CHARS:
        raise BadRequest(f"{where}: {len(value)} characters; at most {MAX_QUERY_CHARS}")
    return value


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for a message."""
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        dict: "an object",
        str: "a string",
    }
    return "null" if value is None else names.get(type(value), "a list")


def strings(value: object, rank: int, where: str, queries: bool = False) -> Any:
    """`value` (nested lists of strings, or {"b64": ...} objects) as nested lists of str of
    `rank`; rows of a rank-2 value may differ in length (padded later). With `queries`, its
    lists of rank 1 are sessions or histories, of at most MAX_ROW queries."""
    if rank == 0:
        return text(value, where)
    if not isinstance(value, list):
        raise BadRequest(f"{where} must be a list (rank {rank}), not {json_type(value)}")
    if queries and rank == 1 and len(value) > MAX_ROW:
        raise BadRequest(f"{where}: {len(value)} queries; at most {MAX_ROW}")
    return [strings(item, rank - 1, f"{where}[{i}]", queries) for i, item in enumerate(value)]


def number(digits: str) -> int | float:
    """A JSON integer; one too long for Python's int() (thousands of digits) as a float, so
    that it is refused as a number where a string is wanted, not with Python's advice."""
    return int(digits) if len(digits) < 100 else float(digits)


def parse_request(
    body: bytes, signatures: Mapping[str, Sequence[str]], max_sessions: int
) -> tuple[str, Columns, str]:
    """(signature name, {input: rows}, "row" or "columnar") of a predict request's JSON."""
    return parse_fields(read_json(body), signatures, max_sessions)


def read_json(body: bytes) -> dict[str, Any]:
    """The JSON object of a predict request's body."""
    try:
        request = json.loads(body, parse_int=number)
    except UnicodeDecodeError as error:
        raise BadRequest(f"the body is not UTF-8 (byte {error.start})") from None
    except ValueError as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    except RecursionError:
        raise BadRequest("the body is not JSON this server reads: nested too deep") from None
    if not isinstance(request, dict):
        raise BadRequest('the body must be a JSON object with "instances" or "inputs"')
    return request


def output_filter(request: Mapping[str, Any], outputs: Sequence[str]) -> list[str]:
    """The outputs a request's optional "output_filter" asks for (as gRPC's PredictRequest
    has it), in the signature's order; all of `outputs` (its output names) without one."""
    wanted = request.get("output_filter")
    if wanted is None:
        return list(outputs)
    if not isinstance(wanted, list) or not all(isinstance(name, str) for name in wanted):
        raise BadRequest('"output_filter" must be a list of output names')
    unknown = [name for name in wanted if name not in outputs]
    if unknown or not wanted:
        raise BadRequest(
            f"output_filter: no output '{echoed(unknown[0] if unknown else '')}'; this "
            f"signature has {', '.join(sorted(outputs))}"
        )
    return [name for name in outputs if name in wanted]


def parse_fields(
    request: Mapping[str, Any], signatures: Mapping[str, Sequence[str]], max_sessions: int
) -> tuple[str, Columns, str]:
    """parse_request's answer for the request's JSON object."""
    name = request.get("signature_name", "serving_default")
    if not isinstance(name, str):
        raise BadRequest(f'"signature_name" must be a string, not {json_type(name)}')
    if name not in signatures:
        raise BadRequest(
            f"no signature '{echoed(name)}' (signature_name); this model has "
            f"{', '.join(signatures)}"
        )
    expected = signatures[name]
    if ("instances" in request) == ("inputs" in request):
        raise BadRequest('give exactly one of "instances" (row form) and "inputs" (columnar form)')
    if "instances" in request:
        form, columns = "row", rows(request["instances"], expected)
    else:
        form, columns = "columnar", columnar(request["inputs"], expected)
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


def rows(instances: object, expected: Sequence[str]) -> Columns:
    """{input: rows} of the row form's "instances", one object (or bare value) per session."""
    if not isinstance(instances, list):
        raise BadRequest('"instances" must be a list, one entry a session')
    if len(expected) == 1 and not all(isinstance(item, dict) for item in instances):
        instances = [{expected[0]: item} for item in instances]
    columns: Columns = {key: [] for key in expected}  # no instances: a batch of no sessions
    for i, item in enumerate(instances):
        if not isinstance(item, dict):
            raise BadRequest(f"instances[{i}] must be an object of {', '.join(expected)}")
        check_names(item, expected, f"instances[{i}]")
        for key in expected:
            rank = INPUT_RANKS[key] - 1
            where = f"instances[{i}].{key}"
            columns[key].append(strings(item[key], rank, where, INPUT_RANKS[key] == 2))
    return columns


def columnar(inputs: object, expected: Sequence[str]) -> Columns:
    """{input: rows} of the columnar form's "inputs", one list per input."""
    if not isinstance(inputs, dict):
        if len(expected) != 1:
            raise BadRequest(f'"inputs" must be an object of {", ".join(expected)}')
        inputs = {expected[0]: inputs}
    check_names(inputs, expected, '"inputs"')
    return {
        key: strings(inputs[key], INPUT_RANKS[key], key, INPUT_RANKS[key] == 2) for key in expected
    }


def check_names(given: Mapping[str, object], expected: Sequence[str], where: str) -> None:
    """A BadRequest naming the inputs of `where` that the signature lacks or that are missing
    (unknown names escaped: a client's key may hold anything)."""
    unknown = set(given) - set(expected)
    missing = [key for key in expected if key not in given]
    if unknown or missing:
        raise BadRequest(
            f"{where}: the signature takes {', '.join(expected)}"
            + (f"; unknown: {listed(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
