"""The search page that `python -m mtn_keras.serve` serves at `/` beside TensorFlow Serving's
routes: plain HTML, CSS and JavaScript read from this package (no build step), each answer
with a Content-Security-Policy that lets the page call its own server only, or the one
TensorFlow Serving address it is pointed at (--page-backend)."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mtn_keras.data.safety import child_core, explicit_core, information_core, innocent_core

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

# The page's files and their media types; nothing else of the package is served.
FILES = {
    "page.css": "text/css",
    "page.js": "text/javascript",
    "secrets.js": "text/javascript",
    "words.js": "text/javascript",
}
MODEL_URL = re.compile(r"https?://[^/?#\s\"'<>]+(?:/[^?#\s\"'<>]*)?/v1/models/[^/:?#\s\"'<>]+")


def model_url(text: str) -> str:
    """A --page-backend address (http://HOST:PORT/v1/models/NAME, as TensorFlow Serving's REST
    API has it), checked; a ValueError saying what to give otherwise."""
    if not MODEL_URL.fullmatch(text):
        raise ValueError(f"{text!r}: give http://HOST:PORT/v1/models/NAME, a model's REST address")
    return text


def policy(backend: str | None) -> str:
    """The Content-Security-Policy of the page: its own scripts, styles and server, and the
    origin of `backend` (None: none) as the one other place it may connect to."""
    connect = "'self'"
    if backend is not None:
        parts = urlsplit(backend)
        connect += f" {parts.scheme}://{parts.netloc}"
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


@cache
def safety_rules() -> bytes:
    """The safety rule's patterns (data/safety.py) as JSON, for the page to read suggestions
    and keep its history as the clients and the app do."""
    cores = {
        "innocent": innocent_core(),
        "information": information_core(),
        "child": child_core(),
        "explicit": explicit_core(),
    }
    return json.dumps(cores).encode()


def page_routes(model: str, backend: str | None) -> list[Route]:
    """The routes of the page for the model served here as `model`, or at `backend` (a model's
    REST address; None: this server's): `/`, its files under `/page/`."""
    from starlette.responses import Response
    from starlette.routing import Route

    headers = {
        "Content-Security-Policy": policy(backend),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    where = backend or f"/v1/models/{model}"
    text = (files(__package__) / "index.html").read_text(encoding="utf-8")
    index = text.replace("{model_url}", html.escape(where, quote=True)).encode()

    async def page(request: Request) -> Response:
        return Response(index, media_type="text/html; charset=utf-8", headers=headers)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name == "safety.json":
            return Response(safety_rules(), media_type="application/json", headers=headers)
        if name not in FILES:
            return Response(b"", status_code=404, headers=headers)
        body = (files(__package__) / name).read_bytes()
        return Response(body, media_type=FILES[name] + "; charset=utf-8", headers=headers)

    return [Route("/", page, methods=["GET"]), Route("/page/{name}", asset, methods=["GET"])]


def add_page(app: Starlette, model: str, backend: str | None = None) -> None:
    """Serve the search page from `app` (rest.make_app's), beside its routes."""
    app.router.routes.extend(page_routes(model, backend))
