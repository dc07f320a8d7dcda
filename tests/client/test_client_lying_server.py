"""A lying server and a leaking address: everything the client reads from a server is checked
before use (texts that are strings, finite scores, lists of one shape, the attention), a bad
address or timeout is refused when the client is made, a password in the address is never
printed, and a server's words reach a message with their control characters escaped. A
fake server in a thread, no TensorFlow."""

import pytest
from fake_model_server import JsonHandler, metadata, serving

import mtn_keras
from mtn_keras import suggest

COMPLETE = {"suggestions": {}, "scores": {}, "sources": {}}
WITH_ATTENTION = COMPLETE | {"session_attention": {}, "queries": {}}
GOOD = {"suggestions": [["rome hotels"]], "scores": [[0.5]], "sources": [["log"]]}
EYE = [[[[1.0]]]]  # [layers, heads, S, S] of one query

# What :predict answers, by the model name in the address: outputs, or (status, body).
ANSWERS = {
    "good": GOOD,
    "null": GOOD | {"suggestions": [[None]]},
    "number": GOOD | {"suggestions": [[5]]},
    "true": GOOD | {"suggestions": [[True]]},
    "list": GOOD | {"suggestions": [["rome", "hotels"]], "scores": [0.5, 0.4]},
    "row-of-text": GOOD | {"suggestions": ["rome hotels"]},
    "escape": GOOD | {"suggestions": [["rome\x1b]0;owned\x07"]]},
    "nan": GOOD | {"scores": [[float("nan")]]},
    "infinity": GOOD | {"scores": [[float("inf")]]},
    "minus-infinity": GOOD | {"scores": [[float("-inf")]]},
    "text-score": GOOD | {"scores": [["0.5"]]},
    "true-score": GOOD | {"scores": [[True]]},
    "short-sources": {
        "suggestions": [["rome hotels", "rome museums"]],
        "scores": [[0.5, 0.4]],
        "sources": [["log"]],
    },
    "number-source": GOOD | {"sources": [[7]]},
    "two-lists": GOOD | {"suggestions": [["a"], ["b"]], "scores": [[0.5], [0.4]]},
    "empty-slot": {
        "suggestions": [["rome hotels", ""]],
        "scores": [[0.5, float("-inf")]],
        "sources": [["log", ""]],
    },
    "no-attention": GOOD,
    "flat-attention": GOOD | {"session_attention": [[1.0]], "queries": [["rome"]]},
    "nan-attention": GOOD | {"session_attention": [[[[[float("nan")]]]]], "queries": [["rome"]]},
    "short-attention": GOOD | {"session_attention": [], "queries": [["rome"]]},
    "escaped-error": (400, {"error": "bad \x1b[2J\x1b]0;owned\x07input\x9b31m \u202etxt"}),
    "escaped-page": (502, b"<b>\x1b[31mdown\x1b[0m</b>\r\n"),
}
# The outputs each model's metadata lists for `complete`, when not COMPLETE.
OUTPUTS = {name: WITH_ATTENTION for name in ANSWERS if "attention" in name}


class FakeServer(JsonHandler):
    """Answers GET .../metadata and POST ...:predict as ANSWERS and OUTPUTS say."""

    def do_GET(self):
        name = self.path.split("/v1/models/")[1].split("/")[0]
        signatures = {"complete": {"outputs": OUTPUTS.get(name, COMPLETE)}}
        if name == "no-complete":
            signatures = {"suggest": signatures["complete"]}
        self.answer(200, metadata(signatures))

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        answer = ANSWERS[self.path.split("/v1/models/")[1].split(":")[0]]
        if not isinstance(answer, tuple):
            answer = (200, {"outputs": answer})
        self.answer(*answer)


@pytest.fixture(scope="module")
def server():
    """http://127.0.0.1:PORT/v1/models/ of the fake server."""
    with serving(FakeServer) as httpd:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/models/"


def refusal(call, *args, **kwargs):
    """The message of the SuggestError that `call(*args, **kwargs)` raises."""
    with pytest.raises(mtn_keras.SuggestError) as raised:
        call(*args, **kwargs)
    message = str(raised.value)
    assert message.isprintable(), message
    return message


def test_the_fake_server_answers_well(server):
    model = mtn_keras.load(server + "good")
    assert model.suggest(["rome"]) == [mtn_keras.Suggestion("rome hotels", 0.5, "log")]


# What a lie's message starts with, by what was called: `attention` for the cases so named.
HEADINGS = {
    "suggest": "answered outputs that are not suggestions",
    "attention": "answered an attention that cannot be read",
}


@pytest.mark.parametrize(
    "case, said",
    [
        ("null", "suggestions[0][0] is null, not a string"),
        ("number", "suggestions[0][0] is 5, not a string"),
        ("true", "suggestions[0][0] is true, not a string"),
        ("list", "scores has the shape [2], not [1, 2]"),
        ("row-of-text", 'suggestions[0] is "rome hotels", not a list'),
        ("escape", "suggestions[0][0] holds a control character: rome\\x1b]0;owned\\x07"),
        ("nan", "scores[0][0] is NaN, not a finite number"),
        ("infinity", "scores[0][0] is Infinity, not a finite number"),
        ("minus-infinity", "scores[0][0] is -Infinity, not a finite number"),
        ("text-score", "scores holds text, not only numbers"),
        ("true-score", "scores holds true or false, not only numbers"),
        ("short-sources", "sources[0] holds 1 entries, not 2"),
        ("number-source", "sources[0][0] is 7, not a string"),
        ("two-lists", "suggestions holds 2 entries, not 1"),
        ("no-attention", "no `session_attention` output"),
        ("flat-attention", "session_attention[0] has the shape [1], not [any, any, any, any]"),
        ("nan-attention", "session_attention[0][0][0][0][0] is NaN, not a finite number"),
        ("short-attention", "session_attention holds 0 entries, not 1"),
    ],
)
def test_a_lying_servers_answer_is_one_suggest_error_that_says_what(server, case, said):
    call = "attention" if "attention" in case else "suggest"
    message = refusal(getattr(mtn_keras.load(server + case), call), ["rome"])
    assert message.startswith(f"{server}{case} {HEADINGS[call]}")
    assert said in message


def test_an_empty_slot_may_score_minus_infinity(server):
    assert [item.text for item in mtn_keras.load(server + "empty-slot").suggest(["rome"])] == [
        "rome hotels"
    ]


@pytest.mark.parametrize(
    "address",
    [
        "http://[::1/v1/models/x",
        "http://::1]/v1/models/x",
        "http://[zz]:80/v1/models/x",
        "http://[::1]x:80/v1/models/x",
        "http://[::1]:99999/v1/models/x",
        "http://host:-1/v1/models/x",
        "http://host:0/v1/models/x",
        "http://a b:80/v1/models/x",
        "http://a\x1bb:80/v1/models/x",
    ],
)
def test_a_malformed_address_is_refused_when_the_client_is_made(address):
    message = refusal(mtn_keras.load, address)
    assert "give http://HOST:PORT/v1/models/NAME" in message


ODD_TIMEOUTS = ["5", None, True, [1], -1, 0, float("nan"), float("inf"), 1e300, 10**400]


@pytest.mark.parametrize("timeout", ODD_TIMEOUTS, ids=[repr(t)[:8] for t in ODD_TIMEOUTS])
def test_an_odd_timeout_is_refused_when_the_client_is_made(server, timeout):
    message = refusal(mtn_keras.load, server + "good", timeout=timeout)
    assert message.startswith("timeout is ") and "seconds" in message


SECRET = "u5er:s3cret@"


@pytest.mark.parametrize(
    "case, call",
    [
        ("no-complete", None),
        ("null", lambda model: model.suggest(["rome"])),
        ("two-lists", lambda model: model.suggest(["rome"])),
        ("no-attention", lambda model: model.attention(["rome"])),
        ("good", lambda model: model.suggest(["rome"], ["earlier"])),
        ("escaped-error", lambda model: model.suggest(["rome"])),
    ],
)
def test_no_message_prints_the_password_in_the_address(server, case, call):
    address = server.replace("http://", "http://" + SECRET) + case
    if call is None:
        message = refusal(mtn_keras.load, address)
    else:
        message = refusal(call, mtn_keras.load(address))
    assert server + case in message and "s3cret" not in message and "u5er" not in message


@pytest.mark.parametrize(
    "address",
    [
        "http://u5er:s3cret@[::1/v1/models/x",
        "http://u5er:s3cret@host:99999/v1/models/x",
        "http://u5er:s3/cret@host:1/v1/models/x",
        "http://u5er:s3?cret@host:1/v1/models/x",
        "HTTP://u5er:s3cret@host:nope/v1/models/x",
        "ftp://u5er:s3cret@host/v1/models/x",
        "http://u5er:s3cret@host:1/v2/x",
    ],
)
def test_no_refused_address_prints_its_password(address):
    message = refusal(mtn_keras.load, address)
    assert "s3cret" not in message and "u5er" not in message


def test_a_servers_error_text_is_shown_with_its_control_characters_escaped(server):
    message = refusal(mtn_keras.load(server + "escaped-error").suggest, ["rome"])
    assert "HTTP 400: bad \\x1b[2J\\x1b]0;owned\\x07input\\x9b31m \\u202etxt" in message
    message = refusal(mtn_keras.load(server + "escaped-page").suggest, ["rome"])
    assert "HTTP 502" in message and "\\x1b[31mdown" in message


def test_suggest_does_not_print_the_password_of_a_servers_address(server, capsys):
    assert suggest.main(["--model", server.replace("http://", "http://" + SECRET) + "x", "a"]) == 2
    said = capsys.readouterr().err
    assert server + "x" in said and "s3cret" not in said and "u5er" not in said
