"""The app on a server (`mtn-tui --server URL`): the same lists, scores, sources and panels as
the model in process, no TensorFlow in the app, the history sent only to this machine unless
asked, and a server that stops or answers garbage said in one line, the session kept."""

import numpy as np
import pytest
from fake_model_server import JsonHandler, metadata, serving
from fresh_python import printed_without_tensorflow

from mtn_tui import main as cli
from mtn_tui.model import LocalModel, SuggestError
from mtn_tui.pilot import settle
from mtn_tui.remote_model import RemoteModel, on_this_machine
from mtn_tui.tui import MtnApp
from mtn_tui.widgets.suggestion_list import SuggestionList

HISTORY = ("cheap hotels", "rome flights", "lisbon")
ASKED = [([], "ch"), (["cheap flights"], ""), (["cheap flights", "hotel deals"], "ro")]


@pytest.fixture(scope="module")
def served(fake_model_with_history, serve):
    """The fake history model's REST address under `python -m mtn_keras.serve`."""
    url, _ = serve(fake_model_with_history, "remembers")
    return url


def test_the_same_answers_in_process_and_over_a_server(fake_model_with_history, served):
    local, remote = LocalModel(fake_model_with_history), RemoteModel(served)
    assert remote.has_history and not remote.withheld_history and remote.notes == ()
    for session, prefix in ASKED:
        for history in ((), HISTORY):
            want = local.suggestions(session, prefix, history)
            got = remote.suggestions(session, prefix, history)
            assert [s.text for s in got] == [s.text for s in want]
            assert [s.source for s in got] == [s.source for s in want]
            np.testing.assert_allclose([s.score for s in got], [s.score for s in want])
            for one, other in zip(got, want):
                np.testing.assert_allclose(one.copy_attention, other.copy_attention)
            assert got.source_tokens == want.source_tokens
            assert got.history == want.history
            np.testing.assert_allclose(got.history_attention, want.history_attention)
        want, got = local.attention(session, HISTORY), remote.attention(session, HISTORY)
        assert got.queries == want.queries
        np.testing.assert_allclose(got.weights, want.weights)
    texts = [item.text for item in remote.suggestions(["cheap flights"], "", HISTORY)]
    assert texts == [item.text for item in local.suggestions(["cheap flights"], "", HISTORY)]


def test_the_app_on_a_server_imports_no_tensorflow(served):
    printed = printed_without_tensorflow(
        "import mtn_tui.main\nfrom mtn_tui.remote_model import RemoteModel\n"
        f"app_model = RemoteModel({served!r})\n"
        "print(app_model.suggestions(['cheap flights'], 'ch')[0].text)\n"
    )
    assert printed[0].startswith("ch")


def test_the_history_goes_to_this_machine_only_unless_asked(served, monkeypatch):
    assert on_this_machine("http://localhost:8501/v1/models/m")
    assert on_this_machine("http://[::1]:8501/v1/models/m")
    assert not on_this_machine("http://10.0.0.7:8501/v1/models/m")
    assert not on_this_machine("https://models.example.com/v1/models/m")
    monkeypatch.setattr("mtn_tui.remote_model.on_this_machine", lambda url: False)
    withheld = RemoteModel(served)
    assert withheld.withheld_history and not withheld.has_history
    assert len(withheld.notes) == 1 and "--send-history" in withheld.notes[0]
    assert withheld.suggestions(["cheap flights"], "", HISTORY).history == []
    sent = RemoteModel(served, send_history=True)
    assert sent.has_history and sent.notes == ()
    assert sent.suggestions(["cheap flights"], "", HISTORY).history == list(HISTORY)


class Garbage(JsonHandler):
    """A server whose metadata lists `complete` and whose answers to it are no outputs."""

    OUTPUTS = ["suggestions", "scores", "copy_attention", "source_tokens"]

    def do_GET(self):
        self.answer(200, metadata({"complete": {"outputs": {name: {} for name in self.OUTPUTS}}}))

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.answer(200, {"outputs": {"suggestions": [["a", "b"]], "scores": "many"}})


@pytest.fixture
def garbage():
    with serving(Garbage) as server:
        yield server, f"http://127.0.0.1:{server.server_address[1]}/v1/models/junk"


def test_garbage_and_a_stopped_server_are_one_line(garbage):
    server, url = garbage
    app_model = RemoteModel(url)
    with pytest.raises(
        SuggestError, match=rf"^{url} answered outputs that are not suggestions \(ValueError: "
    ):
        app_model.suggestions(["cheap flights"])
    server.shutdown()
    server.server_close()
    with pytest.raises(SuggestError, match=f"^Cannot reach {url}:predict: ") as stopped:
        app_model.suggestions(["cheap flights"], "ch")
    assert "\n" not in str(stopped.value)


async def test_the_app_says_so_and_keeps_the_session_and_history(garbage):
    url = garbage[1]
    app = MtnApp(url, show_load_time=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        assert app.model is not None and app.sub_title.startswith("junk on " + url.split("/")[2])
        app.query_one("#query").insert_text_at_cursor("cheap flights")
        await pilot.press("enter")
        await settle(pilot)
        options = app.query_one(SuggestionList)
        message = str(options.get_option_at_index(0).prompt)
        assert options.option_count == 1 and message.startswith(url)
        assert app.main_screen.session == ("cheap flights",)
        assert app.store.recent(5) == ("cheap flights",)


def test_server_and_model_are_one_or_the_other(capsys, monkeypatch):
    monkeypatch.setenv(cli.SERVER_VARIABLE, "http://127.0.0.1:1/v1/models/m")
    assert cli.parser().parse_args([]).server == "http://127.0.0.1:1/v1/models/m"
    for argv in (["--model", "x"], ["--server", "models/m"]):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        assert exited.value.code == 2
    said = capsys.readouterr().err.splitlines()
    assert said[-1].endswith("--server models/m: give http://HOST:PORT/v1/models/NAME")
