"""The main screen: the session, the query input, the suggestion list (its keys:
suggestion_keys.py), and the attention with the panels beside it. Which model call runs when
is the scheduler's (scheduler.py); loading the model and keeping the history are the App's
(tui.py)."""

from __future__ import annotations

from concurrent.futures import Future
from functools import partial
from typing import cast

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Footer, Header

from ..history.control import HistoryControl
from ..model import Answer, Attention, ModelCalls, SuggestError, ignored_reasons, read_as
from ..scheduler import ATTENTION, SUGGESTIONS, Call, Request, Scheduler, Step
from ..widgets.copy_panel import CopyPanel
from ..widgets.heat_map import HeatMap
from ..widgets.history_panel import HistoryPanel
from ..widgets.query_input import QueryInput, typed_prefix
from ..widgets.session_panel import SessionPanel
from ..widgets.suggestion_list import SuggestionList
from .suggestion_keys import SuggestionKeys

CHOOSE = Binding.Group("Pick", compact=True)  # up and down, shown as one in the footer
PANEL_TOOLTIP = "show or hide the panel of attention, history and copied words"


class MainScreen(SuggestionKeys):
    """The session, its next-query suggestions and its attention, for the model in use. The
    suggestion list and its keys are SuggestionKeys' (suggestion_keys.py)."""

    BINDINGS = [
        # The input takes enter itself (QueryInput.submit), in the order of the keys typed.
        Binding(
            "enter",
            "submit",
            "Add",
            show=False,
            tooltip="add the highlighted suggestion, or else the typed query, to the session",
        ),
        Binding(
            "tab",
            "take_suggestion",
            "Take",
            priority=True,
            tooltip="take the highlighted (or else the first) suggestion into the input",
        ),
        Binding(
            "up",
            "move(-1)",
            "Previous",
            group=CHOOSE,
            priority=True,
            tooltip="highlight the previous suggestion (from the first: back to the input)",
        ),
        Binding(
            "down",
            "move(1)",
            "Next",
            group=CHOOSE,
            priority=True,
            tooltip="highlight the next suggestion",
        ),
        Binding("ctrl+n", "new_session", "New", tooltip="new session"),
        Binding("f2", "toggle_attention", "Panel", tooltip=PANEL_TOOLTIP),
        Binding("f3", "next(0)", "Layer", show=False, tooltip="next layer of the attention"),
        Binding("f4", "next(1)", "Head", show=False, tooltip="next head of the attention"),
    ]

    session: reactive[tuple[str, ...]] = reactive(tuple, init=False)
    attention: reactive[Attention | None] = reactive(None, always_update=True, init=False)
    attention_layer = reactive(0)
    attention_head = reactive(0)
    history_note = reactive(HistoryPanel.EMPTY)  # why the history panel lists nothing

    def __init__(self, history: HistoryControl):
        """`history`: the App's, which says what the model reads and keeps what is added."""
        super().__init__()
        self.history = history
        self.scheduler = Scheduler()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield SessionPanel(id="session-box").data_bind(queries=MainScreen.session)
                yield QueryInput(placeholder="Type a query; enter adds it", id="query")
                suggestions = SuggestionList(id="suggestions")
                suggestions.border_title = "Suggestions"
                yield suggestions
            with Vertical(id="attention-panel"):
                yield HeatMap(id="heatmap").data_bind(
                    MainScreen.attention, MainScreen.attention_layer, MainScreen.attention_head
                )
                history_read = HistoryPanel(id="history-read").data_bind(
                    answer=MainScreen.suggestions, why_none=MainScreen.history_note
                )
                history_read.display = False  # until a model that reads history is in
                yield history_read
                yield CopyPanel(id="copy").data_bind(answer=MainScreen.suggestions)
        yield Footer(show_command_palette=False)  # ctrl+p: in F1 help; every key fits at 80

    def use(self, model: ModelCalls) -> None:
        """Answer with `model` from now on."""
        self.model = model
        self.query_one(HistoryPanel).display = model.has_history
        self.scheduler.use(model)
        self.ask(SUGGESTIONS, ATTENTION)

    # The session

    def watch_session(self) -> None:
        # The list on screen answers the session before (often the query just added): clear
        # it at once rather than leave it up until the model answers.
        self.query_one(SuggestionList).show_message("Suggestions for the new session…")
        self.query_one(CopyPanel).suggestion = None
        self.attention = None
        self.ask(SUGGESTIONS, ATTENTION)

    def add_queries(self, texts: list[str]) -> None:
        """Add `texts` (as typed, ends stripped) to the session."""
        queries = [text.strip() for text in texts if text.strip()]
        if not queries:
            self.notify("Empty query ignored: type a query first.", severity="warning")
            return
        # as typed: one typed with a leading space is not kept, as shells do
        typed = [text for text in texts if text.strip()]
        judged = self.history.keep_later(typed, new_session=not self.session)
        if judged is not None:
            stored = partial(store_when_judged, self.app, self.history, judged)
            self.run_worker(stored, thread=True, group="history", exit_on_error=False)
        self.session = (*self.session, *queries)

    def action_submit(self) -> None:
        """Add the highlighted suggestion, or else the typed query, to the session."""
        self.query_one(QueryInput).submit()

    @on(QueryInput.Submitted, "#query")
    def query_submitted(self, event: QueryInput.Submitted) -> None:
        taken = self.query_one(SuggestionList).taken(event.value)
        self.add_queries([taken if taken is not None else event.value])

    @on(QueryInput.LinesPasted)
    def add_pasted_lines(self, event: QueryInput.LinesPasted) -> None:
        self.add_queries(event.lines)

    def action_new_session(self) -> None:
        """Forget the session's queries and start again."""
        self.query_one(QueryInput).clear()
        self.session = ()

    # The model's answers: the scheduler says which call runs when

    @on(QueryInput.Changed, "#query")
    def query_changed(self) -> None:
        self.query_one(SuggestionList).highlighted = None  # what is typed now counts
        self.ask(SUGGESTIONS)

    def ask(self, *kinds: str) -> None:
        """Ask for these answers (SUGGESTIONS, ATTENTION) to the session, the typed words and
        the history, unless they are on screen or on the way."""
        history = self.history.earlier(self.model)
        for kind in kinds:
            prefix = typed_prefix(self.query_one(QueryInput).value) if kind == SUGGESTIONS else ""
            self._follow(self.scheduler.want(kind, Request(self.session, prefix, history)))

    def _follow(self, step: Step) -> None:
        """Show the answers of `step` (a SuggestError: said in their place), then start its call."""
        for kind, answer in step.show:
            if kind == SUGGESTIONS and isinstance(answer, SuggestError):
                self.query_one(SuggestionList).show_message(str(answer))
            elif kind == SUGGESTIONS:
                self.suggestions = cast(Answer, answer)
            elif isinstance(answer, SuggestError):
                self.notify(str(answer), severity="error", timeout=10)
            else:
                self.attention = cast(Attention, answer)
        if step.start is not None:
            self._run(step.start)

    @work(thread=True, group="model")
    def _run(self, call: Call) -> None:
        answer = call.run()
        self.app.call_from_thread(lambda: self._follow(self.scheduler.answered(call, answer)))

    # The attention

    def watch_attention(self, attention: Attention | None) -> None:
        positions = attention.positions if attention is not None else []
        panel = self.query_one(SessionPanel)
        panel.ignored = ignored_reasons(self.session, positions) if attention is not None else {}
        panel.read_as = read_as(attention, self.session) if attention is not None else {}

    def action_next(self, axis: int) -> None:
        """Show the attention's next layer (axis 0) or head (1)."""
        if self.attention is None:
            return
        count = self.attention.weights.shape[axis]
        if axis == 0:
            self.attention_layer = (self.attention_layer + 1) % count
        else:
            self.attention_head = (self.attention_head + 1) % count

    def action_toggle_attention(self) -> None:
        """Show or hide the attention panel."""
        panel = self.query_one("#attention-panel")
        panel.display = not panel.display


def store_when_judged(app: App, history: HistoryControl, judged: Future[list[str]]) -> None:
    """In a worker thread: once the history's filter has judged what was typed (on a thread
    of its own, so that a long paste never freezes the screen), store what it kept; at exit,
    `HistoryControl.close` stores it instead."""
    judged.result()
    app.call_from_thread(history.write_pending)
