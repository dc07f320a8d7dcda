"""`mtn_keras.load`: the same answers from a run folder, its export and that export served over
TensorFlow Serving's REST API; bad input, a folder that is no model and an unreachable server
as one exception type whose message says what and where; no TensorFlow for a server."""

import numpy as np
import pytest
from fresh_python import printed_without_tensorflow

import mtn_keras
from mtn_keras.client.suggester import Suggester

SESSIONS = [["cheap flights", "hotel deals"], ["used cars"], []]


@pytest.fixture(scope="module")
def served(exported, serve):
    """The REST address of `exported` under `python -m mtn_keras.serve`, once it answers."""
    url, _ = serve(exported, "tiny", "--max-batch", "4")
    return url


def same(one, other):
    """Whether two answers of `complete` hold the same suggestions, sources and scores."""
    assert [s.text for s in one] == [s.text for s in other]
    assert [s.source for s in one] == [s.source for s in other]
    np.testing.assert_allclose([s.score for s in one], [s.score for s in other], atol=1e-4)


@pytest.mark.slow
def test_every_backend_answers_alike(exported, trained_model_dir, served):
    from mtn_keras.base.config import DecodeConfig

    direct = mtn_keras.load(str(exported))
    backends = {
        "folder holding savedmodel/": mtn_keras.load(exported.parent),
        "run folder": mtn_keras.load(trained_model_dir, DecodeConfig(k=5, beam=6, xla=False)),
        "REST": mtn_keras.load(served + ":predict"),
    }
    want = direct.complete(SESSIONS, ["", "ch", "hotel"])
    assert want[0] and all(isinstance(s, mtn_keras.Suggestion) for s in want[0])
    assert all(s.text.startswith("ch") for s in want[1])
    attention = direct.attention(SESSIONS[0])
    assert attention.queries == ("cheap flights", "hotel deals")
    detailed = direct.suggest(SESSIONS[0], details=True)
    assert detailed.session == tuple(SESSIONS[0]) and detailed.source_tokens
    for name, model in backends.items():
        got = model.complete(SESSIONS, ["", "ch", "hotel"])
        for row, wanted in zip(got, want):
            same(row, wanted)
        same(model.suggest(SESSIONS[0]), want[0])
        found = model.attention(SESSIONS[0])
        assert found.queries == attention.queries, name
        np.testing.assert_allclose(found.weights, attention.weights, atol=1e-4)
        same_details(model.suggest(SESSIONS[0], details=True), detailed)


def same_details(got, want):
    """Whether two detailed answers say alike what the model read."""
    same(got, want)
    assert got.source_tokens == want.source_tokens and got.positions == want.positions == [0, 1]
    for one, other in zip(got, want):
        assert one.copy_attention.shape == (len(got.source_tokens), len(got.source_tokens[0]))
        np.testing.assert_allclose(one.copy_attention, other.copy_attention, atol=1e-4)
    if want.attention is not None:
        assert got.attention.queries == want.attention.queries == ("cheap flights", "hotel deals")
        assert got.attention.positions == (0, 1)


class Runner:
    """A backend that answers nothing: the checks come before any call."""

    signatures = {"complete": {"suggestions", "scores"}}

    def run(self, name, inputs):
        raise AssertionError("called")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.suggest("cheap flights"), "not a str"),
        (lambda m: m.suggest(["cheap flights", 3]), "session, item 1: 3 is a int"),
        (lambda m: m.suggest([["a"], "b"]), "session item 1 is a str"),
        (lambda m: m.suggest([["a"], ["b", None]]), "session 1, item 1: None"),
        (lambda m: m.complete([["a"], ["b"]], ["x"]), "1 prefixes for a batch of 2"),
        (lambda m: m.complete(["a"], 3), "prefix is a int"),
        (lambda m: m.suggest([["a"], ["b"]], [["x"]]), "history is a list of 2 lists"),
        (lambda m: m.suggest(["a"], ["x"]), "there does not read a history"),
    ],
)
def test_bad_input_is_one_error_that_says_what_and_where(call, message):
    with pytest.raises(mtn_keras.SuggestError, match=message):
        call(Suggester(Runner(), "there"))


def test_no_model_and_no_server_are_named(tmp_path):
    with pytest.raises(mtn_keras.SuggestError, match=f"{tmp_path} is neither a run folder"):
        mtn_keras.load(tmp_path)
    with pytest.raises(mtn_keras.SuggestError, match="does not name a model"):
        mtn_keras.load("http://127.0.0.1:1/models")


def test_a_server_needs_no_tensorflow(port):
    url = f"http://127.0.0.1:{port}/v1/models/tiny"
    said = printed_without_tensorflow(
        "import mtn_keras\n"
        f"try:\n    mtn_keras.load({url!r}, timeout=5)\n"
        "except mtn_keras.SuggestError as error:\n    print(error)\n"
    )
    assert said[0].startswith(f"Cannot reach {url}/metadata")
