"""The Textual app: loading the model, the searcher's history, the dialogs and the command
palette. The session, the suggestion list, its keys and the attention are the main screen's
(screens/main_screen.py); which model call runs when is the scheduler's (scheduler.py), what
the history reads and keeps the history control's (history/control.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.worker import get_current_worker

from mtn_keras.client.remote import is_url

from .history.control import HistoryControl
from .history.store import HistoryStore
from .model import LocalModel, ModelCalls, SuggestError
from .remote_model import RemoteModel
from .scheduler import ATTENTION, SUGGESTIONS
from .screens.dialogs import ErrorScreen, HelpScreen, ModelPrompt
from .screens.help import key_bindings
from .screens.history_screen import HistoryScreen
from .screens.main_screen import MainScreen
from .widgets.history_panel import HistoryPanel
from .widgets.suggestion_list import SuggestionList

PRIVATE_TOOLTIP = "private session on or off: no history read or written"


class MtnApp(App):
    """mtn-tui for one loaded model: its main screen, the history and the dialogs."""

    CSS_PATH = "tui.tcss"
    TITLE = "mtn-tui"
    AUTO_FOCUS = "#query"
    BINDINGS = [
        Binding("f5", "history", "History", tooltip="your stored queries: search, delete"),
        Binding("f6", "toggle_private", "Private", tooltip=PRIVATE_TOOLTIP),
        Binding("ctrl+o", "switch_model", "Model", tooltip="open another model"),
        Binding("f1", "help", "Help", tooltip="help: keys, scores and panels"),
        Binding("ctrl+p", "command_palette", "Palette", show=False, tooltip="command palette"),
        Binding("ctrl+q", "quit", "Quit", show=False, tooltip="quit"),
    ]
    KEYS = key_bindings(
        [*MainScreen.BINDINGS, *BINDINGS]
    )  # every key of the main screen, as help lists them
    APP_ACTIONS = {binding.action for binding in key_bindings(BINDINGS)} - {"quit"}

    def __init__(
        self,
        model_path: str | Path | None = None,
        show_load_time: bool = True,
        history_path: str | Path | None = None,
        use_history: bool = True,
        prepare_tensorflow: Callable | None = None,
        send_history: bool = False,
        explicit: bool = False,
    ):
        """`model_path` may be a server's REST address (http://HOST:PORT/v1/models/NAME):
        then the app calls it and imports no TensorFlow, sending the history only to this
        machine or with `send_history`. `explicit` (--explicit): show sexually explicit
        suggestions where the model gives them (never one that seeks abuse material).
        `history_path` None: the user-data folder's store;
        `use_history` False (--no-history): the store is never opened.
        `prepare_tensorflow(tf)` runs once TensorFlow is imported, before any model call: the
        entry point's process settings."""
        super().__init__()
        self.started = time.perf_counter()
        self.model_path = model_path
        self.show_load_time = show_load_time  # off in snapshot tests, where it would vary
        self.prepare_tensorflow = prepare_tensorflow
        self.send_history = send_history
        self.explicit = explicit
        self.history = HistoryControl(history_path, use_history)
        self._model_title = ""
        self.model: ModelCalls | None = None
        self.main_screen = MainScreen(self.history)

    @property
    def store(self) -> HistoryStore | None:
        """The history store in use, None when history is off."""
        return self.history.store

    def get_default_screen(self) -> MainScreen:
        return self.main_screen

    def on_mount(self) -> None:
        for note in self.history.open():
            self.notify(note, severity="warning", timeout=15)
        if self.history.use_history:
            self.set_interval(5, self.history.write_pending)
        if self.store is None:
            self.main_screen.history_note = "History off: no earlier queries read."
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
            model: ModelCalls | SuggestError
            if is_url(path):
                model = RemoteModel(path, progress, self.send_history)
            else:
                model = LocalModel(path, progress, self.prepare_tensorflow)
        except SuggestError as error:
            model = error
        else:
            model.explicit_shown = self.explicit
        if get_current_worker().is_cancelled:
            return  # another model was asked for meanwhile
        if isinstance(model, SuggestError):
            self.call_from_thread(self._load_failed, str(model))
        else:
            self.call_from_thread(self._loaded, model, time.perf_counter() - since)

    def _progress(self, step: str) -> None:
        if self.model is None:
            self.sub_title = step
            self.main_screen.query_one(SuggestionList).show_message(step)
        else:
            self.sub_title = f"{self.model.name} · opening another model: {step}"

    def _loaded(self, model: ModelCalls, seconds: float) -> None:
        self.model = model
        self._show_title(
            model.name + (f" · ready in {seconds:.1f} s" if self.show_load_time else "")
        )
        if self.show_load_time:
            steps = ", ".join(f"{step} {took:.1f} s" for step, took in model.start_seconds.items())
            self.notify(f"Ready in {seconds:.1f} s: {steps}.", title=model.name)
        for note in model.notes:
            self.notify(note, severity="warning", timeout=15)
        self.main_screen.use(model)

    def _load_failed(self, message: str) -> None:
        if self.model is None:
            self._show_title("no model")
            self.main_screen.query_one(SuggestionList).show_message(
                "No model loaded: press ctrl+o to open one."
            )
            hint = "escape: close, then ctrl+o to open another model"
        else:
            self._show_title(self.model.name)
            hint = f"The model {self.model.name} stays in use. escape: close"
        self.push_screen(ErrorScreen(message, hint))

    def _show_title(self, model: str) -> None:
        """Show `model`'s words in the header, and the history's state when it matters."""
        self._model_title = model
        self.sub_title = " · ".join(filter(None, [model, self.history.state(self.model)]))

    # The searcher's history: the store's last queries before this session, unless private

    def _private_changed(self, private: bool) -> None:
        self._show_title(self._model_title)
        self.main_screen.history_note = (
            "Private session: no history read or written." if private else HistoryPanel.EMPTY
        )
        self.notify(
            "Private session: nothing is read from or written to your history."
            if private
            else "Private session over: your queries are kept again."
        )
        self.main_screen.ask(SUGGESTIONS)

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
        self.main_screen.ask(SUGGESTIONS, ATTENTION)

    # Dialogs and commands

    def action_switch_model(self) -> None:
        """Ask for a model path and load that model; the current one stays if it fails."""

        def switch(path: str | None) -> None:
            if path:
                self.load_model(path)

        self.push_screen(ModelPrompt(), switch)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.KEYS))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The app's keys (but quit) do nothing while a dialog is open."""
        return not (action in self.APP_ACTIONS and isinstance(self.screen, ModalScreen))

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        main = self.main_screen
        yield SystemCommand("New session", "Forget the session's queries", main.action_new_session)
        yield SystemCommand("Switch model", "Open another SavedModel", self.action_switch_model)
        yield SystemCommand(
            "Toggle attention panel", "Show or hide the attention", main.action_toggle_attention
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
