"""The Textual app: type a session of queries, watch next-query suggestions and session attention.

Every model call runs in a thread worker; which suggestion request is asked when is the
scheduler's (scheduler.py), what the history reads and keeps the history control's
(history_control.py). Here: the widgets, the keys and the wiring between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header
from textual.worker import get_current_worker

from mtn_keras.client.remote import is_url

from .history.control import HistoryControl
from .history.store import HistoryStore
from .model import (
    Backend,
    ModelError,
    SessionAttention,
    Suggestions,
    ignored_reasons,
    read_as,
)
from .remote_model import RemoteBackend
from .scheduler import Request, SuggestionScheduler, call_model
from .screens.dialogs import ErrorScreen, HelpScreen, ModelPrompt
from .screens.history_screen import HistoryScreen
from .widgets.copy_panel import CopyPanel
from .widgets.heat_map import HeatMap
from .widgets.history_panel import HistoryPanel
from .widgets.query_input import QueryInput, continue_typed, typed_prefix
from .widgets.session_panel import SessionPanel
from .widgets.suggestion_list import SuggestionList, are_confidences

CHOOSE = Binding.Group("Pick", compact=True)  # up and down, shown as one in the footer
PANEL_TOOLTIP = "show or hide the panel of attention, history and copied words"
PRIVATE_TOOLTIP = "private session on or off: no history read or written"


class MtnApp(App):
    """The session, its next-query suggestions and its attention, for one loaded model."""

    CSS_PATH = "tui.tcss"
    TITLE = "mtn-tui"
    AUTO_FOCUS = "#query"
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
        Binding("f3", "next_layer", "Layer", show=False, tooltip="next layer of the attention"),
        Binding("f4", "next_head", "Head", show=False, tooltip="next head of the attention"),
        Binding("f5", "history", "History", tooltip="your stored queries: search, delete"),
        Binding("f6", "toggle_private", "Private", tooltip=PRIVATE_TOOLTIP),
        Binding("ctrl+o", "switch_model", "Model", tooltip="open another model"),
        Binding("f1", "help", "Help", tooltip="help: keys, scores and panels"),
        Binding("ctrl+p", "command_palette", "Palette", show=False, tooltip="command palette"),
        Binding("ctrl+q", "quit", "Quit", show=False, tooltip="quit"),
    ]
    MAIN_ACTIONS = {binding.action.split("(")[0] for binding in BINDINGS} - {"quit"}

    session: reactive[tuple[str, ...]] = reactive(tuple, init=False)
    suggestions: reactive[Suggestions | None] = reactive(None, always_update=True, init=False)
    attention: reactive[SessionAttention | None] = reactive(None, always_update=True, init=False)
    attention_layer = reactive(0)
    attention_head = reactive(0)

    def __init__(
        self,
        model_path: str | Path | None = None,
        show_load_time: bool = True,
        history_path: str | Path | None = None,
        use_history: bool = True,
        prepare_tensorflow: Callable | None = None,
        send_history: bool = False,
    ):
        """`model_path` may be a server's REST address (http://HOST:PORT/v1/models/NAME):
        then the app calls it and imports no TensorFlow, sending the history only to this
        machine or with `send_history`. `history_path` None: the user-data folder's store;
        `use_history` False (--no-history): the store is never opened.
        `prepare_tensorflow(tf)` runs once TensorFlow is imported, before any model call: the
        entry point's process settings."""
        super().__init__()
        self.started = time.perf_counter()
        self.model_path = model_path
        self.show_load_time = show_load_time  # off in snapshot tests, where it would vary
        self.prepare_tensorflow = prepare_tensorflow
        self.send_history = send_history
        self.history = HistoryControl(history_path, use_history)
        self.scheduler = SuggestionScheduler(self._wanted, self._suggest, self._show_answer)
        self._model_title = ""
        self.backend: Backend | None = None
        self._attention_request = 0  # only the newest attention is shown

    @property
    def store(self) -> HistoryStore | None:
        """The history store in use, None when history is off."""
        return self.history.store

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield SessionPanel(id="session-box")
                yield QueryInput(placeholder="Type a query; enter adds it", id="query")
                yield SuggestionList(id="suggestions")
            with Vertical(id="attention-panel"):
                yield HeatMap(id="heatmap").data_bind(MtnApp.attention_layer, MtnApp.attention_head)
                yield HistoryPanel(id="history-read")
                yield CopyPanel(id="copy")
        yield Footer(show_command_palette=False)  # ctrl+p: in F1 help; every key fits at 80

    def on_mount(self) -> None:
        self.query_one("#suggestions").border_title = "Suggestions"
        self.query_one(CopyPanel).suggestion = None
        self.query_one(SessionPanel).queries = ()
        self.query_one(HeatMap).attention = None
        self.query_one(HistoryPanel).display = False  # until a model that reads history is in
        for note in self.history.open():
            self.notify(note, severity="warning", timeout=15)
        if self.history.use_history:
            self.set_interval(5, self.history.write_pending)
        if self.store is None:
            self.query_one(HistoryPanel).why_none = "History off: no earlier queries read."
        self.load_model(self.model_path, since=self.started)  # the real wait: from the start

    def on_unmount(self) -> None:
        self.history.close()

    # Model loading: a failed load keeps the model in use

    def load_model(self, path: str | Path | None, since: float | None = None) -> None:
        """Load the model at `path` (default: the bundled one) in a thread, saying each step;
        its time counts from `since` (default: now)."""
        self._load(path, since or time.perf_counter())

    @work(thread=True, exclusive=True, group="load")
    def _load(self, path: str | Path | None, since: float) -> None:
        progress = partial(self.call_from_thread, self._progress)
        try:
            if is_url(path):
                backend = RemoteBackend(path, progress, self.send_history)
            else:
                backend = Backend(path, progress, self.prepare_tensorflow)
        except ModelError as error:
            backend = error
        if get_current_worker().is_cancelled:
            return  # another model was asked for meanwhile
        if isinstance(backend, ModelError):
            self.call_from_thread(self._load_failed, str(backend))
        else:
            self.call_from_thread(self._loaded, backend, time.perf_counter() - since)

    def _progress(self, step: str) -> None:
        if self.backend is None:
            self.sub_title = step
            self.query_one(SuggestionList).show_message(step)
        else:
            self.sub_title = f"{self.backend.name} · opening another model: {step}"

    def _loaded(self, backend: Backend, seconds: float) -> None:
        self.backend = backend
        self._show_title(
            backend.name + (f" · ready in {seconds:.1f} s" if self.show_load_time else "")
        )
        self.query_one(HistoryPanel).display = backend.has_history
        if self.show_load_time:
            steps = ", ".join(
                f"{step} {took:.1f} s" for step, took in backend.start_seconds.items()
            )
            self.notify(f"Ready in {seconds:.1f} s: {steps}.", title=backend.name)
        for note in backend.notes:
            self.notify(note, severity="warning", timeout=15)
        self.scheduler.use(backend)
        self.request_attention()

    def _load_failed(self, message: str) -> None:
        if self.backend is None:
            self._show_title("no model")
            self.query_one(SuggestionList).show_message(
                "No model loaded: press ctrl+o to open one."
            )
            hint = "escape: close, then ctrl+o to open another model"
        else:
            self._show_title(self.backend.name)
            hint = f"The model {self.backend.name} stays in use. escape: close"
        self.push_screen(ErrorScreen(message, hint))

    def _show_title(self, model: str) -> None:
        """Show `model`'s words in the header, and the history's state when it matters."""
        self._model_title = model
        self.sub_title = " · ".join(filter(None, [model, self.history.state(self.backend)]))

    # The searcher's history: the store's last queries before this session, unless private

    def _private_changed(self, private: bool) -> None:
        self._show_title(self._model_title)
        self.query_one(HistoryPanel).why_none = (
            "Private session: no history read or written." if private else HistoryPanel.EMPTY
        )
        self.notify(
            "Private session: nothing is read from or written to your history."
            if private
            else "Private session over: your queries are kept again."
        )
        self.request_suggestions()

    def action_toggle_private(self) -> None:
        """Start or end a private session, in which no history is read or written."""
        refusal = self.history.toggle_private()
        if refusal:
            self.notify(refusal)
        else:
            self._private_changed(self.history.private)

    def action_history(self) -> None:
        """Show the stored queries, to search and delete them."""
        if self.store is None:
            self.notify("History is off: there is no store to show.", severity="warning")
        else:
            self.push_screen(HistoryScreen(self.store), lambda _: self._history_changed())

    def _history_changed(self) -> None:
        """Ask again for what depends on the history, after deletes."""
        self.request_suggestions()
        self.request_attention()

    # The session

    def watch_session(self, session: tuple[str, ...]) -> None:
        self.query_one(SessionPanel).queries = session
        # The list on screen answers the session before (often the query just added): clear
        # it at once rather than leave it up until the model answers.
        self.query_one(SuggestionList).show_message("Suggestions for the new session…")
        self.query_one(CopyPanel).suggestion = None
        self.request_suggestions()
        self.request_attention()

    def add_queries(self, texts: list[str]) -> None:
        """Add `texts` (as typed, ends stripped) to the session."""
        queries = [text.strip() for text in texts if text.strip()]
        if not queries:
            self.notify("Empty query ignored: type a query first.", severity="warning")
            return
        # as typed: one typed with a leading space is not kept, as shells do
        self.history.keep([text for text in texts if text.strip()], new_session=not self.session)
        self.session = (*self.session, *queries)

    def action_submit(self) -> None:
        """Add the highlighted suggestion, or else the typed query, to the session."""
        self.query_one(QueryInput).submit()

    @on(QueryInput.Submitted, "#query")
    def query_submitted(self, event: QueryInput.Submitted) -> None:
        taken = self._taken(event.value)
        self.add_queries([taken if taken is not None else event.value])

    @on(QueryInput.LinesPasted)
    def add_pasted_lines(self, event: QueryInput.LinesPasted) -> None:
        self.add_queries(event.lines)

    def action_new_session(self) -> None:
        """Forget the session's queries and start again."""
        self.query_one(QueryInput).clear()
        self.session = ()

    # Suggestions: one call at a time; when it returns, the newest input is asked for

    def _wanted(self) -> Request:
        """The session, typed prefix and history that the suggestions on screen should answer."""
        return Request(
            self.session,
            typed_prefix(self.query_one(QueryInput).value),
            self.history.earlier(self.backend),
        )

    @on(QueryInput.Changed, "#query")
    def query_changed(self) -> None:
        self.query_one(SuggestionList).highlighted = None  # what is typed now counts
        self.request_suggestions()

    def request_suggestions(self) -> None:
        """Ask for suggestions for the session and typed words, unless on screen or on the way."""
        self.scheduler.request()

    @work(thread=True, group="suggest")
    def _suggest(self, backend: Backend, request: Request) -> None:
        answer = call_model(backend, request)
        self.call_from_thread(self.scheduler.answered, backend, request, answer)

    def _show_answer(self, request: Request, answer: Suggestions | ModelError | None) -> None:
        """Put the scheduler's answer on screen (None: nothing asked)."""
        if isinstance(answer, ModelError):
            self.query_one(SuggestionList).show_message(str(answer))
        else:
            self.suggestions = answer

    def watch_suggestions(self, suggestions: Suggestions | None) -> None:
        options = self.query_one(SuggestionList)
        copy = self.query_one(CopyPanel)
        self.query_one(HistoryPanel).read = (
            (suggestions.history, suggestions.history_attention) if suggestions else ([], None)
        )
        if suggestions is None:
            message = (
                "Type a query, or add one to the session, to get suggestions."
                if self.backend is not None
                else "No model loaded yet."
            )
            options.show_message(message)
        elif not suggestions.items:
            options.show_none(suggestions.prefix)
        else:
            options.show(suggestions)
            copy.confidences = are_confidences([item.score for item in suggestions.items])
            copy.tokens = suggestions.source_tokens
            copy.numbers = [index + 1 for index in suggestions.positions]
        copy.suggestion = None

    @on(SuggestionList.OptionHighlighted, "#suggestions")
    def show_copy(self, event: SuggestionList.OptionHighlighted) -> None:
        """Show what the highlighted suggestion copied."""
        if self.suggestions is not None and event.option_index < len(self.suggestions.items):
            item = self.suggestions.items[event.option_index]
            self.query_one(CopyPanel).suggestion = (event.option_index + 1, item)

    def action_move(self, step: int) -> None:
        """Highlight the next (1) or previous (-1) suggestion; up from the first leaves the list."""
        options = self.query_one(SuggestionList)
        if not self.suggestions or not self.suggestions.items:
            return
        if step > 0:
            options.action_cursor_down()
        elif options.highlighted == 0:
            options.highlighted = None
            self.query_one(CopyPanel).suggestion = None
        else:
            options.action_cursor_up()

    def _taken(self, typed: str) -> str | None:
        """The highlighted suggestion, continuing `typed`; None when none is highlighted."""
        highlighted = self.query_one(SuggestionList).highlighted
        if self.suggestions is None or highlighted is None:
            return None
        return continue_typed(typed, self.suggestions.items[highlighted].text)

    def action_take_suggestion(self) -> None:
        """Put the highlighted (or else the first) suggestion into the input, to edit or submit."""
        options = self.query_one(SuggestionList)
        if self.suggestions is None or not self.suggestions.items:
            return
        if options.highlighted is None:
            options.highlighted = 0
        query = self.query_one(QueryInput)
        text = self._taken(query.value)
        query.value = text
        query.cursor_position = len(text)

    # Attention

    def request_attention(self) -> None:
        """Ask for the session attention of the current session."""
        self._attention_request += 1
        self.attention = None
        if self.backend is not None and self.session:
            earlier = self.history.earlier(self.backend)
            self._attend(self._attention_request, self.backend, self.session, earlier)

    @work(thread=True, exclusive=True, group="attention")
    def _attend(
        self, request: int, backend: Backend, session: tuple[str, ...], history: tuple[str, ...]
    ) -> None:
        try:
            result = backend.attention(list(session), history)
        except ModelError as error:
            result = error
        self.call_from_thread(self._attended, request, result)

    def _attended(self, request: int, result: SessionAttention | ModelError) -> None:
        if request != self._attention_request:
            return  # the session changed meanwhile
        if isinstance(result, ModelError):
            self.notify(str(result), severity="error", timeout=10)
            return
        self.attention = result

    def watch_attention(self, attention: SessionAttention | None) -> None:
        heat_map = self.query_one(HeatMap)
        positions = attention.positions if attention is not None else []
        heat_map.numbers = [index + 1 for index in positions]
        heat_map.attention = attention
        panel = self.query_one(SessionPanel)
        panel.ignored = ignored_reasons(self.session, positions) if attention is not None else {}
        panel.read_as = read_as(attention, self.session) if attention is not None else {}

    def action_next_layer(self) -> None:
        """Show the next layer's attention."""
        if self.attention is not None:
            self.attention_layer = (self.attention_layer + 1) % self.attention.weights.shape[0]

    def action_next_head(self) -> None:
        """Show the next head's attention."""
        if self.attention is not None:
            self.attention_head = (self.attention_head + 1) % self.attention.weights.shape[1]

    def action_toggle_attention(self) -> None:
        """Show or hide the attention panel."""
        panel = self.query_one("#attention-panel")
        panel.display = not panel.display

    # Dialogs and commands

    def action_switch_model(self) -> None:
        """Ask for a model path and load that model; the current one stays if it fails."""

        def switch(path: str | None) -> None:
            if path:
                self.load_model(path)

        self.push_screen(ModelPrompt(), switch)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing while a dialog is open."""
        return not (action in self.MAIN_ACTIONS and isinstance(self.screen, ModalScreen))

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand("New session", "Forget the session's queries", self.action_new_session)
        yield SystemCommand("Switch model", "Open another SavedModel", self.action_switch_model)
        yield SystemCommand(
            "Toggle attention panel", "Show or hide the attention", self.action_toggle_attention
        )
        yield SystemCommand(
            "History", "Your stored queries: search and delete them", self.action_history
        )
        yield SystemCommand(
            "Toggle private session",
            "Nothing read from or written to your history while on",
            self.action_toggle_private,
        )
        yield SystemCommand("Help", "Keys and panels of mtn-tui", self.action_help)
