"""The query input: a text input where a paste of several lines adds one query per line."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Input

from mtn_keras.data.text import completes, normalise


class QueryInput(Input):
    """Type the next query; a multi-line paste posts LinesPasted instead of keeping line one."""

    class LinesPasted(Message):
        """Several lines were pasted: each is a query of the session, in order."""

        def __init__(self, lines: list[str]):
            super().__init__()
            self.lines = lines

    def submit(self) -> None:
        """Post Submitted with the text typed so far and clear the input, in the order of the
        keys: a key typed right after enter goes to the next query.

        Submitted goes first: clearing posts Changed, which drops the highlighted suggestion
        that the app adds on Submitted."""
        self.post_message(self.Submitted(self, self.value))
        self.clear()

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            # Here, not as a binding: a binding runs when the key has bubbled up to the app,
            # after the keys typed behind it are in the input already.
            event.stop()
            event.prevent_default()
            self.submit()

    def _on_paste(self, event: events.Paste) -> None:
        lines = [line for line in event.text.splitlines() if line.strip()]
        if len(lines) < 2:
            return  # Input's own handler inserts it
        event.prevent_default()
        event.stop()
        # What was typed around the cursor joins the first pasted line.
        before, after = self.value[: self.cursor_position], self.value[self.cursor_position :]
        lines[0] = before + lines[0] + after
        self.clear()
        self.post_message(self.LinesPasted(lines))


def continue_typed(typed: str, suggestion: str) -> str:
    """`suggestion` written as a continuation of what was typed, which stays as typed.

    The model reads the typed text normalised ("h&r" as "h r"), so its suggestions are
    normalised too; where a suggestion extends the typed words, only its rest is added to
    the typed characters. Otherwise the suggestion is taken as it is.
    """
    words, wanted = normalise(typed).split(), suggestion.split()
    open_word = bool(normalise(typed[-1:]))  # the last word is unfinished: it may be completed
    if not words or not completes(suggestion, " ".join(words) + ("" if open_word else " ")):
        return suggestion
    if open_word:
        rest = wanted[len(words) - 1][len(words[-1]) :]
        return typed + rest + "".join(" " + word for word in wanted[len(words) :])
    return typed + " ".join(wanted[len(words) :])


def typed_prefix(typed: str) -> str:
    """The prefix the model is asked to complete: the typed words, spaces collapsed; a
    trailing space is kept, as it says the last word is finished."""
    return " ".join(typed.split()) + (" " if typed[-1:].isspace() and typed.strip() else "")
