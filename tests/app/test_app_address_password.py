"""A password in a server's address is never shown by the app: not while it asks the server,
not in the header once the model is ready, not when `--server` is refused. A fake server in
a thread, no TensorFlow."""

import pytest
from fake_model_server import JsonHandler, metadata, serving

from mtn_tui import main as cli
from mtn_tui.pilot import settle
from mtn_tui.remote_model import RemoteModel
from mtn_tui.tui import MtnApp

OUTPUTS = {
    "suggestions": [["rome hotels"]],
    "scores": [[0.5]],
    "sources": [["log"]],
    "copy_attention": [[[[1.0]]]],  # [B, k, S, n]: the app asks what the model read
    "source_tokens": [[["rome"]]],
}


class Server(JsonHandler):
    """Lists `complete` in its metadata and answers it with one suggestion."""

    def do_GET(self):
        self.answer(200, metadata({"complete": {"outputs": {name: {} for name in OUTPUTS}}}))

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.answer(200, {"outputs": OUTPUTS})


@pytest.fixture(scope="module")
def address():
    """(the fake server's HOST:PORT, its model's address with a user and password)."""
    with serving(Server) as server:
        where = f"127.0.0.1:{server.server_address[1]}"
        yield where, f"http://u5er:s3cret@{where}/v1/models/m"


def test_the_app_model_names_the_server_without_the_password(address):
    where, url = address
    steps = []
    app_model = RemoteModel(url, steps.append)
    assert app_model.name == f"m on {where}"
    assert steps == [f"Asking http://{where}/v1/models/m…"]
    assert app_model.suggestions(["rome"])[0].text == "rome hotels"


async def test_the_header_shows_no_password(address):
    where, url = address
    app = MtnApp(url, show_load_time=False, use_history=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith(f"m on {where}")
        assert "s3cret" not in app.sub_title and "u5er" not in app.sub_title


def test_a_refused_server_address_is_said_without_its_password(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--server", "ftp://u5er:s3cret@host/v1/models/m"])
    said = capsys.readouterr().err
    assert "--server ftp://host/v1/models/m: give" in said and "s3cret" not in said
