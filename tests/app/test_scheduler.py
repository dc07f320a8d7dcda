"""The one scheduler of model calls, without Textual: one call in flight, suggestions before
the attention, only an answer for what is wanted now is shown, and the newest input is asked
for when a call returns."""

import subprocess
import sys
from pathlib import Path

from mtn_tui.model import SuggestError
from mtn_tui.scheduler import ATTENTION, SUGGESTIONS, Call, Request, Scheduler, Step

EMPTY = Request((), "", ())
PARIS = Request(("paris",), "", ())


def test_nothing_is_asked_before_a_model_is_in():
    assert Scheduler().want(SUGGESTIONS, PARIS) == Step()


def test_one_call_at_a_time_and_the_newest_input_is_asked_when_it_returns():
    scheduler, app_model = Scheduler(), object()
    scheduler.use(app_model)
    first = scheduler.want(SUGGESTIONS, PARIS).start
    assert first == Call(SUGGESTIONS, app_model, PARIS)
    assert scheduler.want(SUGGESTIONS, Request(("paris",), "ho", ())) == Step()
    newest = Request(("paris",), "hot", ())
    assert scheduler.want(SUGGESTIONS, newest) == Step()  # typing went on during the call
    step = scheduler.answered(first, "stale answer")
    assert step == Step((), Call(SUGGESTIONS, app_model, newest))  # not shown: no longer wanted
    step = scheduler.answered(step.start, "answer")
    assert step == Step(((SUGGESTIONS, "answer"),))
    assert scheduler.want(SUGGESTIONS, newest) == Step()  # already shown: not asked again


def test_the_attention_is_asked_after_the_suggestions():
    scheduler, app_model = Scheduler(), object()
    scheduler.use(app_model)
    suggestions = scheduler.want(SUGGESTIONS, PARIS).start
    assert scheduler.want(ATTENTION, PARIS) == Step()
    step = scheduler.answered(suggestions, "list")
    assert step == Step(((SUGGESTIONS, "list"),), Call(ATTENTION, app_model, PARIS))
    assert scheduler.answered(step.start, "weights") == Step(((ATTENTION, "weights"),))


def test_no_session_and_nothing_typed_shows_nothing_without_a_call():
    scheduler = Scheduler()
    scheduler.use(object())
    assert scheduler.want(SUGGESTIONS, EMPTY) == Step(((SUGGESTIONS, None),))
    assert scheduler.want(ATTENTION, Request((), "typed", ())) == Step(((ATTENTION, None),))


def test_an_answer_of_the_model_replaced_meanwhile_is_dropped():
    scheduler, old, new = Scheduler(), object(), object()
    scheduler.use(old)
    call = scheduler.want(SUGGESTIONS, PARIS).start
    scheduler.use(new)  # the call of `old` is still in flight: `new` waits for it
    assert scheduler.answered(call, "old answer") == Step((), Call(SUGGESTIONS, new, PARIS))


class LocalModel:
    def suggestions(self, session, prefix, history):
        if prefix == "bad":
            raise SuggestError("the model failed")
        return (session, prefix, history)

    def attention(self, session, history):
        return ("attention", session, history)


def test_a_call_asks_the_model_client_and_answers_its_error():
    app_model = LocalModel()
    asked = Request(("a",), "b", ("h",))
    assert Call(SUGGESTIONS, app_model, asked).run() == (["a"], "b", ("h",))
    assert Call(ATTENTION, app_model, asked).run() == ("attention", ["a"], ("h",))
    assert isinstance(Call(SUGGESTIONS, app_model, Request(("a",), "bad", ())).run(), SuggestError)


def test_the_scheduler_and_the_history_control_run_without_textual():
    code = (
        "import sys, mtn_tui.scheduler, mtn_tui.history.control; "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
