"""The runner of a TensorFlow Serving REST endpoint (`python -m mtn_keras.serve` or TensorFlow
Serving itself): the standard library's http.client and json, no TensorFlow, no new dependency.

The address names the model: `http://HOST:PORT/v1/models/NAME`, optionally with
`/versions/N` and `:predict`. The signatures come from `GET .../metadata`; each call is
`POST ...:predict` with `signature_name` and the columnar `inputs`, answered by `outputs`.
Each request has one deadline for the whole of it (connect, send, headers and body: a server
that answers a byte a second is cut off there), an answer is read up to MAX_ANSWER_BYTES, and
whatever goes wrong on the way is one SuggestError. An address or a timeout that is not one
is refused before anything is sent. A user and password in the address are sent as HTTP
basic authentication and never printed; a server's words reach a message with their control
characters escaped.
"""

import base64
import http.client
import ipaddress
import json
import re
import socket
import threading
import time
from typing import Any, TypeGuard
from urllib.parse import unquote, urlsplit

from mtn_keras.client.checks import printable
from mtn_keras.client.inputs import SuggestError

MODEL_URL = re.compile(
    r"^(https?://[^/?#]+(?:/[^?#]*)?/v1/models/[^/:?#]+(?:/versions/\d+)?)(?::predict)?/?$",
    re.IGNORECASE,  # the scheme's case does not matter; a name's is kept as given
)
HOST_PORT = re.compile(r"(\[[^\[\]]*\]|[^\[\]:]+)(?::([0-9]*))?")  # after the userinfo
GIVE = "give http://HOST:PORT/v1/models/NAME, as TensorFlow Serving's REST API has it"
MAX_TIMEOUT_S = 86400  # a day: a longer wait is no deadline
LOADING_POLL_S = 0.5  # how often a server that is still loading its model is asked again
MAX_ANSWER_BYTES = 16 << 20  # 1,000 sessions' suggestions and attention fit in a few MiB
READ_BYTES = 1 << 16


def is_url(model: object) -> TypeGuard[str]:
    """Whether `model` names a server rather than a path."""
    return isinstance(model, str) and model.lower().startswith(("http://", "https://"))


def redacted(url: str) -> str:
    """`url` as messages print it: without the user and password it may hold (all before
    the last `@` ahead of the model's path, however malformed the address), its control
    characters escaped."""
    scheme, separator, rest = url.partition("://")
    model = rest.find("/v1/models/")
    userinfo = rest.rfind("@", 0, model if model >= 0 else len(rest))
    return printable(scheme + separator + rest[userinfo + 1 :] if separator else url, 500)


def check_timeout(timeout: object) -> float:
    """`timeout` if it is a number of seconds above 0 and at most MAX_TIMEOUT_S; else a
    SuggestError, before anything is sent."""
    if (
        not isinstance(timeout, (int, float))
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise SuggestError(
            f"timeout is {printable(repr(timeout), 40)}: give the seconds each request may "
            f"take, a number above 0 and at most {MAX_TIMEOUT_S} (a day)"
        )
    return float(timeout)


def host_and_port(address: str) -> tuple[str, int | None]:
    """(the host, the port or None for the scheme's) of a server's `address`, the model's
    URL; a SuggestError saying what is wrong with it (the userinfo never printed)."""
    shown = redacted(address)
    if not address.isprintable() or " " in address:  # urlsplit would drop some silently
        raise SuggestError(f"{shown} holds a space or a control character: {GIVE}")
    try:
        parts = urlsplit(address)
        host = parts.hostname
    except ValueError as error:  # a bracket without its pair, no IP address inside them
        reason = printable(str(error), 80)
        raise SuggestError(f"{shown} is not an address ({reason}): {GIVE}") from None
    try:
        port = parts.port
    except ValueError:  # not digits, or past 65535
        port = 0
    if not host:  # http://:8501/...: http.client would fail with a TypeError
        raise SuggestError(f"{shown} names no host: {GIVE}")
    if port == 0:
        raise SuggestError(f"{shown}: the port is not a number from 1 to 65535: {GIVE}")
    found = HOST_PORT.fullmatch(parts.netloc.rpartition("@")[2])
    if not found or _bad_ip(found.group(1)):  # "[::1]x", "[v1.x]"
        raise SuggestError(f"{shown}: the host is not a name or an IP address: {GIVE}")
    return host, port


def _bad_ip(host):
    """Whether `host`, in brackets, is not an IPv6 address (its %zone aside)."""
    if not host.startswith("["):
        return False
    try:
        ipaddress.IPv6Address(host[1:-1].partition("%")[0])
    except ValueError:
        return True
    return False


class Unavailable(SuggestError):
    """HTTP 503: the server is up, its model not (yet) ready."""


class Rest:
    """A model behind TensorFlow Serving's REST API; `timeout` seconds for each request, all
    of it."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.timeout = check_timeout(timeout)
        found = MODEL_URL.match(url)
        if not found:
            raise SuggestError(f"{redacted(url)} does not name a model: {GIVE}")
        self.host, self.port = host_and_port(found.group(1))
        parts = urlsplit(found.group(1))
        self.headers = {"Content-Type": "application/json"}
        if parts.username is not None:
            login = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            self.headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
        self.https, self.path = parts.scheme == "https", parts.path
        self.url = redacted(found.group(1))
        metadata = self._metadata()
        try:
            found = metadata["metadata"]["signature_def"]["signature_def"]
            self.signatures = {name: set(sig.get("outputs", {})) for name, sig in found.items()}
        except (KeyError, TypeError, AttributeError):
            raise SuggestError(f"{self.url}/metadata did not list the model's signatures") from None

    def run(self, name: str, inputs: dict[str, list]) -> dict:
        body = {"signature_name": name, "inputs": inputs}
        answer = self._request(":predict", body)
        outputs = answer.get("outputs") if isinstance(answer, dict) else None
        if not isinstance(outputs, dict):
            raise SuggestError(f"{self.url}:predict answered without the outputs of `{name}`")
        return outputs

    def _metadata(self) -> Any:
        """The model's metadata. A server still loading the model (HTTP 503, as `python -m
        mtn_keras.serve` answers from its start) is asked again every LOADING_POLL_S
        seconds, within `timeout` in all."""
        until = time.monotonic() + self.timeout
        while True:
            try:
                return self._request("/metadata")
            except Unavailable:
                if time.monotonic() + LOADING_POLL_S > until:
                    raise
                time.sleep(LOADING_POLL_S)

    def _request(self, suffix: str, body: dict[str, Any] | None = None) -> Any:
        """The JSON answer of a GET (no body) or a POST of `body` to the model's address with
        `suffix`, within `timeout` seconds in all."""
        url = self.url + suffix
        data = None if body is None else json.dumps(body).encode("utf-8")
        try:
            status, text = self._exchange(suffix, data)
        except TimeoutError:
            raise SuggestError(f"{url} did not answer within {self.timeout:g} s") from None
        except http.client.HTTPException as error:
            raise SuggestError(f"{url} did not answer in HTTP: {_reason(error)}") from None
        except OSError as error:
            raise SuggestError(f"Cannot reach {url}: {_reason(error)}") from None
        if status != 200:
            refusal = Unavailable if status == 503 else SuggestError
            raise refusal(f"{url} answered HTTP {status}: {_said(text)}")
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as error:
            raise SuggestError(f"{url} did not answer JSON: {str(error)[:200]}") from None

    def _exchange(self, suffix: str, data: bytes | None) -> tuple[int, bytes]:
        """(status, body bytes) of one request; TimeoutError past the deadline, when a timer
        shuts the socket whatever it was waiting for."""
        deadline = time.monotonic() + self.timeout
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=self.timeout)
        late = threading.Event()

        def cut_off() -> None:
            late.set()
            if connection.sock is not None:
                try:
                    connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(self.timeout, cut_off)
        timer.daemon = True
        timer.start()
        try:
            connection.request(
                "GET" if data is None else "POST", self.path + suffix, data, self.headers
            )
            response = connection.getresponse()
            chunks, size = [], 0
            while chunk := response.read(READ_BYTES):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise SuggestError(
                        f"{self.url + suffix} answered more than {MAX_ANSWER_BYTES >> 20} MiB: "
                        "not an answer of this model"
                    )
                chunks.append(chunk)
            if late.is_set() or time.monotonic() > deadline:
                raise TimeoutError
            return response.status, b"".join(chunks)
        except (OSError, http.client.HTTPException):
            if late.is_set():
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()
            connection.close()


def _reason(error: BaseException) -> str:
    """What went wrong, in a few words on one line."""
    said = printable(" ".join(str(getattr(error, "reason", None) or error).split()), 120)
    if isinstance(error, http.client.HTTPException):
        return f"{type(error).__name__} {said!r}" if said else type(error).__name__
    return said or type(error).__name__


def _said(text: bytes) -> str:
    """The `error` of a TensorFlow Serving error answer, else its text's beginning."""
    decoded = text.decode("utf-8", "replace")
    try:
        said = str(json.loads(decoded)["error"])
    except (ValueError, KeyError, TypeError, RecursionError):
        said = decoded
    return printable(" ".join(said.split())) or "no body"
