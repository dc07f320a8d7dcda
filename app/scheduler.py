"""Which model call runs when: one at a time, for what the main screen shows now, so that typing
never waits on the model and calls never pile up behind it. The suggestions for the typed words
go first, then the session's attention. Plain Python: the screen starts the call that a `Step`
names in a worker and shows what it hands back."""

from __future__ import annotations

from typing import NamedTuple

from .model import Answer, Attention, ModelCalls, SuggestError

SUGGESTIONS, ATTENTION = "suggestions", "attention"  # what a call asks for, in this order


class Request(NamedTuple):
    """What the screen should answer: the session, the typed prefix and the searcher's earlier
    queries."""

    session: tuple[str, ...]
    prefix: str
    history: tuple[str, ...]

    def needs(self, kind: str) -> bool:
        """Whether the model is asked: typed words are completed from the first key, while the
        attention needs a query in the session."""
        return bool(self.session or (kind == SUGGESTIONS and self.prefix))


class Call(NamedTuple):
    """One model call: what it asks for (`kind`), of which model, for which request."""

    kind: str
    model: ModelCalls
    request: Request

    def run(self) -> Answer | Attention | SuggestError:
        """The model's answer (in a worker thread), or the error that says why there is none."""
        session, history = list(self.request.session), self.request.history
        try:
            if self.kind == ATTENTION:
                return self.model.attention(session, history)
            return self.model.suggestions(session, self.request.prefix, history)
        except SuggestError as error:
            return error
        except Exception as error:  # an answer no reading expected: the app stays up
            return SuggestError(f"the model's answer could not be read ({type(error).__name__})")


class Step(NamedTuple):
    """What the screen does now: show these (kind, answer) pairs (None: nothing asked, no
    session and nothing typed), then start `start` unless None."""

    show: tuple[tuple[str, object], ...] = ()
    start: Call | None = None


class Scheduler:
    """At most one call in flight; when it returns, the next wanted answer is asked for. An
    answer is shown only if it is still what is wanted, from the model in use."""

    def __init__(self):
        self.model: ModelCalls | None = None
        self.wanted: dict[str, Request | None] = {SUGGESTIONS: None, ATTENTION: None}
        self.shown: dict[str, Request | None] = {SUGGESTIONS: None, ATTENTION: None}
        self.asking: Call | None = None  # the call in flight

    def use(self, model: ModelCalls) -> None:
        """Answer with `model` from now on: what is on screen is asked for again."""
        self.model = model
        self.shown = dict.fromkeys(self.shown)

    def want(self, kind: str, request: Request) -> Step:
        """The screen should answer `request` for `kind` now."""
        self.wanted[kind] = request
        return self._next()

    def answered(self, call: Call, answer) -> Step:
        """Show the answer of the call in flight if it is still wanted, then ask for what is."""
        self.asking = None
        shown: tuple[tuple[str, object], ...] = ()
        if call.model is self.model and call.request == self.wanted[call.kind]:
            self.shown[call.kind] = call.request
            shown = ((call.kind, answer),)
        step = self._next()  # typing went on meanwhile: ask for what is there now
        return Step(shown + step.show, step.start)

    def _next(self) -> Step:
        """The wanted answers not on screen: those without a call at once, then one call."""
        if self.model is None or self.asking is not None:
            return Step()  # no model yet, or the call in flight asks again when it returns
        shown = []
        for kind, wanted in self.wanted.items():
            if wanted is None or wanted == self.shown[kind]:
                continue
            if not wanted.needs(kind):
                self.shown[kind] = wanted
                shown.append((kind, None))
                continue
            self.asking = Call(kind, self.model, wanted)
            return Step(tuple(shown), self.asking)
        return Step(tuple(shown))
