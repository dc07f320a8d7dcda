"""The dialogs: help, a model that failed to open, and the prompt for another model's path
(the history's dialogs are in history_screen.py).

Each has a footer with its keys and says in its text how it closes: a dialog covers the
app's footer.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Markdown, Static

from .help import help_text, key_bindings
from .history_screen import HistoryScreen


class HelpScreen(ModalScreen[None]):
    """The keys (`bindings`: the main screen's and the app's) and what the panels show."""

    AUTO_FOCUS = ".dialog"  # so that the arrow keys scroll it
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, bindings: list[Binding]):
        super().__init__()
        self.key_bindings = bindings

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Static("escape, f1 or q closes this help; ↑ ↓ scroll it.", classes="hint")
            yield Markdown(help_text(self.key_bindings, key_bindings(HistoryScreen.BINDINGS)))
        yield Footer()


class ErrorScreen(ModalScreen[None]):
    """A model that could not be loaded: what failed and where, instead of a traceback."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close")]

    def __init__(self, message: str, hint: str):
        super().__init__()
        self.message = message
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Cannot load the model", classes="title")
            yield Static(self.message, id="error-message")
            yield Static(self.hint, classes="hint", id="error-hint")
        yield Footer()


class ModelPrompt(ModalScreen[str | None]):
    """Asks for the path of the model to switch to."""

    AUTO_FOCUS = "#model-path"
    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                "Open a model: a SavedModel directory, one containing savedmodel/, "
                "default (the bundled model), or a server's http://HOST:PORT/v1/models/NAME"
            )
            yield Input(placeholder="path/to/savedmodel", id="model-path")
            yield Static("enter opens it; escape cancels.", classes="hint")
        yield Footer()

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)
