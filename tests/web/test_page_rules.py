"""The search page's files and rules without a model: its headers with and without a
TensorFlow Serving address (--page-backend), the files it serves and no others, the options,
and its JavaScript ports of the app's secrets filter, the safety rule and `normalise`, run in
headless Chromium on the same probes as the Python they port and found to agree."""

import gzip
import random
import threading
import time
from pathlib import Path

import pytest
from chromium_driver import ROOT, chromium
from script_module import load_script

from mtn_keras.data.text import normalise
from mtn_keras.serving.page import page_routes

TFS = "http://tfs.example:8501/v1/models/mtn"
AOL_DEV = ROOT.parent / "shared/data/aol/aol-top1000-dev.txt.gz"
EDGES = [
    "",
    "   ",
    " private thing",
    "\u3000full width space first",
    "x\x1cy",
    "ＰＡＳＳＷＯＲＤ hunter2",
    "password ٤١١١",
    "pin ١٢٣٤",
    "٤١١١ ١١١١ ١١١١ ١١١١",
    "𝟒𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏",
    "ssn ０７８-０５-１１２０",
    "DE89 3704 0044 0532 0130 00",
    "de89370400440532013000",
    "https://user:pa55@example.com/x",
    "-----BEGIN RSA PRIVATE KEY-----",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "café password: élan",
    "Σίσυφος password",
    "a" * 2049,
    "pass word secret",
    "api key 1234abcd",
    "school girl pics",
    "teen models",
    "weather boston",
]


def secret_queries():
    """The app tests' made-up secret-like queries (tests/app/secret_queries.py)."""
    return load_script("tests/app/secret_queries.py").secret_queries()


def probes():
    """The strings both filters judge: edge cases, the made-up secrets, and 1,000 queries of
    the AOL dev log when it is here."""
    strings = EDGES + secret_queries()
    if AOL_DEV.exists():
        with gzip.open(AOL_DEV, "rt", encoding="utf-8", errors="replace") as log:
            next(log)
            queries = sorted({row.split("\t")[1] for row in log if row.count("\t") >= 2})
        strings += random.Random(0).sample(queries, 1000)
    return strings


@pytest.fixture(scope="module")
def pages():
    """A server of the page's routes alone, pointed at a TensorFlow Serving address."""
    import uvicorn
    from starlette.applications import Starlette

    config = uvicorn.Config(Starlette(routes=page_routes("mtn", TFS)), port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_the_page_calls_the_backend_it_is_given_and_nothing_else(pages):
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(pages + "/") as answer:
        csp, body = answer.headers["Content-Security-Policy"], answer.read().decode()
    assert "connect-src 'self' http://tfs.example:8501;" in csp
    assert f'<meta name="mtn-model" content="{TFS}">' in body
    for path in ("/page/__init__.py", "/page/..%2F__init__.py", "/page/index.html"):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(pages + path)


def test_serve_checks_the_page_options(capsys):
    from mtn_keras.serve import arguments

    args = arguments(["--no-page", "--page-backend", TFS])
    assert args.no_page and args.page_backend == TFS
    with pytest.raises(SystemExit):
        arguments(["--page-backend", "tfs.example:8501"])
    assert "give http://HOST:PORT/v1/models/NAME" in capsys.readouterr().err


JUDGED = """const done = arguments[1];
Promise.all([import('/page/secrets.js'), import('/page/words.js')]).then(async ([s, w]) => {
  const rules = await w.safetyRules();
  done(arguments[0].map(q => [s.looksSecret(q), s.kept(q, rules), w.normalise(q),
    w.mayShow(q, rules)]));
});"""


def test_the_pages_filters_agree_with_the_apps(pages):
    from mtn_keras.data.safety import may_show
    from mtn_tui.history.filter import HistoryFilter
    from mtn_tui.history.secrets import looks_secret

    driver = chromium()
    try:
        driver.get(pages + "/page/page.css")
        strings = probes()
        judged = driver.execute_async_script(JUDGED, strings)
    finally:
        driver.quit()
    app_filter = HistoryFilter(Path("/nonexistent/history-ignore"))
    expected = [[looks_secret(q), app_filter.kept(q), normalise(q), may_show(q)] for q in strings]
    differ = [
        (q, mine, theirs) for q, mine, theirs in zip(strings, judged, expected) if mine != theirs
    ]
    assert not differ, differ[:5]
    assert sum(looks_secret(q) for q in strings) >= 100
