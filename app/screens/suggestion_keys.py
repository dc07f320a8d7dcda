"""The suggestion list of the main screen and its keys: what the list says when it has no
suggestion, the copy panel of the highlighted one, up and down through the list and tab to
take one into the input. The keys are bound in MainScreen.BINDINGS, where the help's key
table reads them."""

from __future__ import annotations

from textual import on
from textual.reactive import reactive
from textual.screen import Screen

from ..model import Answer, ModelCalls
from ..widgets.copy_panel import CopyPanel
from ..widgets.query_input import QueryInput
from ..widgets.suggestion_list import SuggestionList


class SuggestionKeys(Screen):
    """The suggestions on screen (`suggestions`, None before the first answer) and the keys
    that move through them; MainScreen asks the model for them."""

    suggestions: reactive[Answer | None] = reactive(None, always_update=True, init=False)
    model: ModelCalls | None = None  # the model in use, once loaded (MainScreen.use)

    def watch_suggestions(self, suggestions: Answer | None) -> None:
        options = self.query_one(SuggestionList)
        if suggestions is None:
            message = (
                "Type a query, or add one to the session, to get suggestions."
                if self.model is not None
                else "No model loaded yet."
            )
            options.show_message(message)
        elif not suggestions:
            options.show_none(suggestions.prefix, suggestions.why)
        else:
            options.show(suggestions)
        self.query_one(CopyPanel).suggestion = None

    @on(SuggestionList.OptionHighlighted, "#suggestions")
    def show_copy(self, event: SuggestionList.OptionHighlighted) -> None:
        """Show what the highlighted suggestion copied."""
        if self.suggestions is not None and event.option_index < len(self.suggestions):
            item = self.suggestions[event.option_index]
            self.query_one(CopyPanel).suggestion = (event.option_index + 1, item)

    def action_move(self, step: int) -> None:
        """Highlight the next (1) or previous (-1) suggestion; up from the first leaves the list."""
        options = self.query_one(SuggestionList)
        if not self.suggestions:
            return
        if step > 0:
            options.action_cursor_down()
        elif options.highlighted == 0:
            options.highlighted = None
            self.query_one(CopyPanel).suggestion = None
        else:
            options.action_cursor_up()

    def action_take_suggestion(self) -> None:
        """Put the highlighted (or else the first) suggestion into the input, to edit or submit."""
        options = self.query_one(SuggestionList)
        if not options.items:
            return
        if options.highlighted is None:
            options.highlighted = 0
        query = self.query_one(QueryInput)
        text = options.taken(query.value)
        if text is None:
            return
        query.value = text
        query.cursor_position = len(text)
