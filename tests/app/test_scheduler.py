"""The one-request-at-a-time scheduler, without Textual: one call in flight, only an answer
for what is wanted now is shown, and the newest input is asked for when a call returns."""

import subprocess
import sys
from pathlib import Path

from mtn_tui.model import ModelError
from mtn_tui.scheduler import Request, SuggestionScheduler, call_model

EMPTY = Request((), "", ())


class Screen:
    """What the app would hold: the wanted request, the calls started and what is shown."""

    def __init__(self):
        self.wanted = Request(("paris",), "", ())
        self.started, self.shown = [], []
        self.scheduler = SuggestionScheduler(
            lambda: self.wanted,
            lambda backend, request: self.started.append((backend, request)),
            lambda request, answer: self.shown.append((request, answer)),
        )


def test_nothing_is_asked_before_a_model_is_in():
    screen = Screen()
    screen.scheduler.request()
    assert screen.started == [] and screen.shown == []


def test_one_call_at_a_time_and_the_newest_input_is_asked_when_it_returns():
    screen, backend = Screen(), object()
    screen.scheduler.use(backend)
    first = screen.wanted
    assert screen.started == [(backend, first)]
    screen.wanted = Request(("paris",), "ho", ())
    screen.scheduler.request()
    screen.wanted = Request(("paris",), "hot", ())
    screen.scheduler.request()
    assert len(screen.started) == 1  # typing went on while the call was in flight
    screen.scheduler.answered(backend, first, "stale answer")
    assert screen.shown == []  # no longer what is on screen
    assert screen.started[-1] == (backend, screen.wanted)
    screen.scheduler.answered(backend, screen.wanted, "answer")
    assert screen.shown == [(screen.wanted, "answer")] and len(screen.started) == 2
    screen.scheduler.request()  # already shown: not asked again
    assert len(screen.started) == 2


def test_no_session_and_nothing_typed_shows_nothing_without_a_call():
    screen = Screen()
    screen.wanted = EMPTY
    screen.scheduler.use(object())
    screen.scheduler.request()
    assert screen.started == [] and screen.shown == [(EMPTY, None)]


def test_an_answer_of_the_model_replaced_meanwhile_is_dropped():
    screen, old, new = Screen(), object(), object()
    screen.scheduler.use(old)
    screen.scheduler.use(new)  # the call of `old` is still in flight: `new` waits for it
    assert screen.started == [(old, screen.wanted)]
    screen.scheduler.answered(old, screen.wanted, "old answer")
    assert screen.shown == [] and screen.started[-1] == (new, screen.wanted)


class Backend:
    def suggestions(self, session, prefix, history):
        if prefix == "bad":
            raise ModelError("the model failed")
        return (session, prefix, history)


def test_the_call_asks_the_model_client_and_answers_its_error():
    backend = Backend()
    assert call_model(backend, Request(("a",), "b", ("h",))) == (["a"], "b", ("h",))
    assert isinstance(call_model(backend, Request(("a",), "bad", ())), ModelError)


def test_the_scheduler_and_the_history_control_run_without_textual():
    code = (
        "import sys, mtn_tui.scheduler, mtn_tui.history.control; "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
