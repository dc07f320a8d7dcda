"""The Textual app: type a session of queries, watch next-query suggestions and session attention.

Every model call runs in a thread worker and only the newest answer is shown, so typing never waits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.color import Color
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from app.model import Backend, ModelError, Suggestions

DEBOUNCE = 0.2  # seconds of quiet typing before the model is asked
COPY_ROWS = 8  # source words listed for the highlighted suggestion
CHOOSE = Binding.Group("Choose", compact=True)  # up and down, shown as one in the footer
COLD, HOT = (38, 42, 58), (255, 170, 40)  # heat map colours for weights 0 and 1

HELP = """\
# mtn-tui

Type a query and press **enter**: it joins the session. The suggestions for the *next* query
update as you type: with nothing typed the model suggests freely, otherwise it completes
the words typed so far.

| Key | Action |
| --- | --- |
| enter | add the typed query to the session |
| tab | take the highlighted suggestion into the input |
| up / down | highlight another suggestion |
| ctrl+n | new session |
| f2 | show or hide the attention panel |
| f3 / f4 | next layer / next head of the attention |
| ctrl+o | open another model |
| ctrl+p | command palette |
| f1 | this help |
| ctrl+q | quit |

The **attention** panel shows how much each query of the session (row) attends to each
earlier query (column) in the model's session encoder. The **copy** panel lists the session
words that the highlighted suggestion copied, with their copy weights.
"""


def short(text: str, width: int) -> str:
    """`text` cut to `width` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def weight_label(weight: float) -> str:
    """A weight as printed in a cell: ".42", "1.00"."""
    label = f"{weight:.2f}"
    return label[1:] if label.startswith("0") else label


def heat_map(attention: np.ndarray, queries: list[str]) -> Table:
    """An S x S table of attention weights, coloured by weight, labelled with the queries."""
    table = Table(box=None, padding=0, show_edge=False, header_style="bold")
    table.add_column("")
    for index, query in enumerate(queries, 1):
        table.add_column(f"{index}\n{short(query, 5)}", justify="center", min_width=6)
    for index, (query, row) in enumerate(zip(queries, attention), 1):
        cells = []
        for weight in row:
            mix = float(np.clip(weight, 0.0, 1.0))
            background = Color.from_rgb(*(c + (h - c) * mix for c, h in zip(COLD, HOT)))
            style = Style(bgcolor=background, color="black" if mix > 0.5 else "white")
            cells.append(Text(f" {weight_label(weight)} ", style=style))
        table.add_row(f"{index} {short(query, 14)} ", *cells)
    return table


def copy_table(weights: np.ndarray, tokens: list[list[str]]) -> Table:
    """The source words with the largest copy weights, strongest first, with bars."""
    words = [
        (float(weight), index, word)
        for index, (row_weights, row_tokens) in enumerate(zip(weights, tokens), 1)
        for weight, word in zip(row_weights, row_tokens)
        if word
    ]
    words.sort(key=lambda item: -item[0])
    top = max([weight for weight, _, _ in words] + [1e-9])
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in ("word", "query", "weight", ""):
        table.add_column(name, justify="right" if name in ("query", "weight") else "left")
    for weight, index, word in words[:COPY_ROWS]:
        table.add_row(word, str(index), weight_label(weight), "█" * round(10 * weight / top))
    return table


class SuggestionList(OptionList, can_focus=False):
    """The suggestions; never focused, so keys keep going to the query input."""


class HelpScreen(ModalScreen[None]):
    """The keys and what the panels show."""

    AUTO_FOCUS = ".dialog"  # so that the arrow keys scroll it
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Markdown(HELP)


class ErrorScreen(ModalScreen[None]):
    """A model that could not be loaded: what failed and where, instead of a traceback."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close")]

    def __init__(self, message: str):
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Cannot load the model", classes="title")
            yield Static(self.message, id="error-message")
            yield Static("escape: close, then ctrl+o to open another model", classes="hint")


class ModelPrompt(ModalScreen[str | None]):
    """Asks for the path of the model to switch to."""

    AUTO_FOCUS = "#model-path"
    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Open a model: a SavedModel directory, or one containing savedmodel/")
            yield Input(placeholder="path/to/savedmodel", id="model-path")

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class MtnApp(App):
    """The session, its next-query suggestions and its attention, for one loaded model."""

    CSS_PATH = "tui.tcss"
    TITLE = "mtn-tui"
    AUTO_FOCUS = "#query"
    BINDINGS = [
        Binding("tab", "take_suggestion", "Take", priority=True),
        Binding("up", "move(-1)", "Previous", group=CHOOSE, priority=True),
        Binding("down", "move(1)", "Next", group=CHOOSE, priority=True),
        Binding("ctrl+n", "new_session", "New session"),
        Binding("f2", "toggle_attention", "Attention"),
        Binding("f3", "next_layer", "Layer"),
        Binding("f4", "next_head", "Head"),
        Binding("ctrl+o", "switch_model", "Model"),
        Binding("f1", "help", "Help"),
    ]
    MAIN_ACTIONS = {binding.action.split("(")[0] for binding in BINDINGS}

    def __init__(self, model_path: str | Path | None = None, show_load_time: bool = True):
        super().__init__()
        self.model_path = model_path
        self.show_load_time = show_load_time  # off in snapshot tests, where it would vary
        self.backend: Backend | None = None
        self.session: list[str] = []
        self.suggestions: Suggestions | None = None
        self.attention: np.ndarray | None = None  # [layers, heads, S, S] of self.session
        self.layer = self.head = 0
        self._suggest_request = self._attention_request = 0  # only the newest answer is shown
        self._asked: tuple | None = None  # (session, prefix) last asked, not to ask twice
        self._debounce: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with VerticalScroll(id="session-box", can_focus=False):
                    yield Static(id="session")
                yield Input(placeholder="Type a query, enter adds it to the session", id="query")
                yield SuggestionList(id="suggestions")
            with Vertical(id="attention-panel"):
                yield Static(id="heatmap")
                yield Static(id="copy")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#session-box").border_title = "Session"
        self.query_one("#suggestions").border_title = "Suggestions"
        self.query_one("#copy").border_title = "Copied words"
        self.show_session()
        self.show_attention()
        self.load_model(self.model_path)

    # Model loading

    def load_model(self, path: str | Path | None) -> None:
        """Load the model at `path` (default: the project's) in a thread, showing "loading"."""
        self.backend = None
        self._suggest_request += 1
        self._attention_request += 1
        self.sub_title = "loading…"
        self.show_message("Loading the model…")
        self._load(path)

    @work(thread=True, exclusive=True, group="load")
    def _load(self, path: str | Path | None) -> None:
        try:
            backend = Backend(path)
        except ModelError as error:
            backend = error
        if get_current_worker().is_cancelled:
            return  # another model was asked for meanwhile
        if isinstance(backend, ModelError):
            self.call_from_thread(self._load_failed, str(backend))
        else:
            self.call_from_thread(self._loaded, backend)

    def _loaded(self, backend: Backend) -> None:
        self.backend = backend
        seconds = f" · loaded in {backend.load_seconds:.1f} s" if self.show_load_time else ""
        self.sub_title = backend.name + seconds
        self._asked = None
        self.request_suggestions()
        self.request_attention()

    def _load_failed(self, message: str) -> None:
        self.sub_title = "no model"
        self.show_message("No model loaded: press ctrl+o to open one.")
        self.push_screen(ErrorScreen(message))

    # Suggestions

    @on(Input.Changed, "#query")
    def query_changed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE, self.request_suggestions)

    @on(Input.Submitted, "#query")
    def add_query(self, event: Input.Submitted) -> None:
        query = " ".join(event.value.split())
        if not query:
            self.notify("Empty query ignored: type a query first.", severity="warning")
            return
        self.session.append(query)
        event.input.clear()
        self.show_session()
        self.request_suggestions()
        self.request_attention()

    def request_suggestions(self) -> None:
        """Ask for suggestions after the session, completing the typed words if any."""
        if self.backend is None:
            return
        typed = self.query_one("#query", Input).value
        # A trailing space says the last word is finished; without it the model completes it.
        prefix = " ".join(typed.split()) + (" " if typed[-1:].isspace() and typed.strip() else "")
        if (tuple(self.session), prefix) == self._asked:
            return
        self._asked = (tuple(self.session), prefix)
        self._suggest_request += 1
        if not self.session:
            self.show_message("Add a query to the session to get suggestions for the next one.")
            return
        self._suggest(self._suggest_request, self.backend, list(self.session), prefix)

    @work(thread=True, exclusive=True, group="suggest")
    def _suggest(self, request: int, backend: Backend, session: list[str], prefix: str) -> None:
        try:
            result = backend.complete(session, prefix) if prefix else backend.suggest(session)
        except ModelError as error:
            result = error
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._show_suggestions, request, result)

    def _show_suggestions(self, request: int, result: Suggestions | ModelError) -> None:
        if request != self._suggest_request:
            return  # a newer request is on its way
        if isinstance(result, ModelError):
            self.show_message(str(result))
            return
        if not result.items:
            self.show_message("No suggestions.")
            return
        self.suggestions = result
        options = self.query_one(SuggestionList)
        options.clear_options()
        for index, item in enumerate(result.items, 1):
            prompt = Text.assemble((f"{index} {item.score:6.2f}  ", "dim"), item.text)
            options.add_option(Option(prompt))
        options.highlighted = 0
        self.show_copy()

    def show_message(self, message: str) -> None:
        """Show `message` in place of the suggestions."""
        self.suggestions = None
        options = self.query_one(SuggestionList)
        options.clear_options()
        options.add_option(Option(Text(message, style="dim"), disabled=True))
        self.show_copy()

    @on(OptionList.OptionHighlighted, "#suggestions")
    def show_copy(self) -> None:
        """Show the source words copied by the highlighted suggestion."""
        copy = self.query_one("#copy", Static)
        highlighted = self.query_one(SuggestionList).highlighted
        if self.suggestions is None or highlighted is None:
            copy.border_title = "Copied words"
            copy.update(Text("No suggestion highlighted.", style="dim"))
            return
        item = self.suggestions.items[highlighted]
        copy.border_title = f"Copied by suggestion {highlighted + 1}"
        copy.update(copy_table(item.copy_attention, self.suggestions.source_tokens))

    def action_move(self, step: int) -> None:
        """Highlight the previous (-1) or next (1) suggestion."""
        options = self.query_one(SuggestionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def action_take_suggestion(self) -> None:
        """Put the highlighted suggestion into the input, to edit or submit it."""
        highlighted = self.query_one(SuggestionList).highlighted
        if self.suggestions is None or highlighted is None:
            return
        query = self.query_one("#query", Input)
        query.value = self.suggestions.items[highlighted].text
        query.cursor_position = len(query.value)

    # Session and attention

    def show_session(self) -> None:
        box = self.query_one("#session-box")
        box.border_title = f"Session ({len(self.session)})"
        lines = [Text.assemble((f"{i:>2} ", "dim"), q) for i, q in enumerate(self.session, 1)]
        empty = Text("No queries yet: type one and press enter.", style="dim")
        self.query_one("#session", Static).update(Text("\n").join(lines) if lines else empty)
        box.scroll_end(animate=False)

    def request_attention(self) -> None:
        """Ask for the session attention of the current session."""
        self._attention_request += 1
        self.attention = None
        self.show_attention()
        if self.backend is not None and self.session:
            self._attend(self._attention_request, self.backend, list(self.session))

    @work(thread=True, exclusive=True, group="attention")
    def _attend(self, request: int, backend: Backend, session: list[str]) -> None:
        try:
            result = backend.attention(session)
        except ModelError as error:
            result = error
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._show_attention_result, request, result)

    def _show_attention_result(self, request: int, result: np.ndarray | ModelError) -> None:
        if request != self._attention_request:
            return
        if isinstance(result, ModelError):
            self.notify(str(result), severity="error", timeout=10)
            return
        self.attention = result
        self.layer = min(self.layer, result.shape[0] - 1)
        self.head = min(self.head, result.shape[1] - 1)
        self.show_attention()

    def show_attention(self) -> None:
        heatmap = self.query_one("#heatmap", Static)
        heatmap.border_subtitle = "rows attend to columns"
        if self.attention is None:
            heatmap.border_title = "Session attention"
            heatmap.update(Text("Add queries to see how they attend to each other.", style="dim"))
            return
        layers, heads = self.attention.shape[:2]
        layer, head = f"{self.layer + 1}/{layers}", f"{self.head + 1}/{heads}"
        heatmap.border_title = f"Attention · layer {layer} · head {head}"
        size = self.attention.shape[-1]
        heatmap.update(heat_map(self.attention[self.layer, self.head], self.session[-size:] if size else []))

    def action_next_layer(self) -> None:
        """Show the next layer's attention."""
        if self.attention is not None:
            self.layer = (self.layer + 1) % self.attention.shape[0]
            self.show_attention()

    def action_next_head(self) -> None:
        """Show the next head's attention."""
        if self.attention is not None:
            self.head = (self.head + 1) % self.attention.shape[1]
            self.show_attention()

    def action_toggle_attention(self) -> None:
        """Show or hide the attention panel."""
        panel = self.query_one("#attention-panel")
        panel.display = not panel.display

    def action_new_session(self) -> None:
        """Forget the session's queries and start again."""
        self.session.clear()
        self.query_one("#query", Input).clear()
        self.show_session()
        self.request_suggestions()
        self.request_attention()

    # Dialogs and commands

    def action_switch_model(self) -> None:
        """Ask for a model path and load that model."""

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
        yield SystemCommand("Help", "Keys and panels of mtn-tui", self.action_help)
