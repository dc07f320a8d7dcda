"""The one interface over every kind of model: the input checks, the padding, the choice of
signature, and the answers as plain dataclasses.

A runner only calls a signature: `signatures` maps each signature it has to the
names of its outputs, `settings` (if it has them) holds what the model says of itself (an
export's export.json), and `run(name, inputs)` takes the inputs as lists of strings, already
padded to one width, and answers arrays (numpy, or lists that numpy reads). Everything a
person could get wrong is checked here, once, for every runner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mtn_keras.client.answer import Answer, Attention, attentions, read_rows
from mtn_keras.client.inputs import Session, SuggestError, asked, sessions_of
from mtn_keras.client.reasons import why_empty
from mtn_keras.data.padding import front_padded


class Runner(Protocol):
    """A runner (module docstring): the output names of each signature it has, and `run`."""

    @property
    def signatures(self) -> Mapping[str, set[str]]: ...

    def run(self, name: str, inputs: dict[str, list]) -> dict[str, Any]: ...


class Suggester:
    """Suggestions and attention for one session (a list of query strings, oldest first) or a
    batch (a list of such lists). One session gets one answer; a batch gets a list of them, in
    order. `[]` is one session without a query."""

    def __init__(self, runner: Runner, where: str, explicit_shown: bool = False) -> None:
        self._runner = runner
        self.where = where  # what the messages name: a path or a URL
        # Whatever the model answers, an explicit suggestion is dropped unless asked for, and
        # one that seeks sexual content involving minors always (data/safety.py).
        self.explicit_shown = explicit_shown
        if "complete" not in runner.signatures:
            raise SuggestError(
                f"{where} has no `complete` signature: it is not an export of mtn-keras"
            )
        self.reads_history = "complete_with_history" in runner.signatures
        # Every list comes from one signature: `complete` is `complete_with_history` with an
        # empty history (docs/contracts.md), and one graph spares a second's compilation.
        self.answering = "complete_with_history" if self.reads_history else "complete"
        self.signatures = runner.signatures  # each signature's output names
        # A recent export answers the session attention with the suggestions (one call).
        self.answers_attention = "session_attention" in runner.signatures[self.answering]
        # k, max_query_tokens, history_size...: export.json's; none from a server
        self.settings = getattr(runner, "settings", {})

    def suggest(
        self, session: Session, history: Session | None = None, details: bool = False
    ) -> Answer | list[Answer]:
        """The suggestions for the query after `session`, nothing typed of it yet.

        Args:
            session: the queries so far, oldest first; or a batch, a list of such lists.
            history: the searcher's earlier queries, oldest first (for a batch, one list per
                session), for a model that reads them (`reads_history`); None: none.
            details: whether the Answer also says what the model read (each suggestion's
                copy attention, the queries' words, the session attention, the history kept).

        Returns:
            An Answer (a list of Suggestion, best first, whose `why` says why it is empty
            when it is); a list of them, in order, for a batch.

        Raises:
            SuggestError: bad input, a history for a model that reads none, or a failed call.

        Example:
            >>> import mtn_keras
            >>> model = mtn_keras.load("default")
            >>> lists = model.suggest([["weather boston"], ["pizza hut", "dominos pizza"]])
            >>> len(lists), all(len(answer) <= 5 for answer in lists)
            (2, True)
            >>> answer = model.suggest(["weather boston"], ["seattle weather"], details=True)
            >>> answer[0].text, answer[0].from_history, answer.history
            ('seattle weather', True, ['seattle weather'])
        """
        return self.complete(session, "", history, details)

    def complete(
        self,
        session: Session,
        prefix: str | list[str],
        history: Session | None = None,
        details: bool = False,
    ) -> Answer | list[Answer]:
        """As `suggest`, every suggestion starting with the words of `prefix`.

        Args:
            session: the queries so far, oldest first; or a batch, a list of such lists.
            prefix: what has been typed of the next query; for a batch, one string for all
                or a list of one per session.
            history: as `suggest`'s.
            details: as `suggest`'s.

        Returns:
            An Answer, or a list of them for a batch, as `suggest`'s.

        Raises:
            SuggestError: as `suggest`'s.

        Example:
            >>> import mtn_keras
            >>> model = mtn_keras.load("default")
            >>> answer = model.complete(["cheap flights", "rome hotels"], "hotel", details=True)
            >>> all(item.text.startswith("hotel") for item in answer), answer.prefix
            (True, 'hotel')
            >>> answer.source_tokens[1][:2], answer.positions, answer[0].copy_attention.shape
            (['rome', 'hotels'], [0, 1], (2, 10))
            >>> model.complete(["cheap flights"], "zzzzqqq").why
            'No known query starts like “zzzzqqq”.'
        """
        sessions, prefixes, histories, batched = asked(session, prefix, history)
        out = self._call(sessions, prefixes, histories)
        try:
            rows = read_rows(out, sessions, self.explicit_shown, details)
        except ValueError as error:  # what checks.py refuses, said with where
            raise SuggestError(
                f"{self.where} answered outputs that are not suggestions (ValueError: {error})"
            ) from None
        earliers: Sequence[list[str] | None] = histories or [None] * len(sessions)
        answers = [
            Answer(
                items,
                "" if items else self.why(one, typed, texts, earlier),
                session=one,
                prefix=typed,
                slots=len(texts),
                **found,
            )
            for (items, texts, found), one, typed, earlier in zip(
                rows, sessions, prefixes, earliers
            )
        ]
        return answers if batched else answers[0]

    def why(
        self,
        session: list[str],
        prefix: str,
        answered: list[str],
        history: list[str] | None = None,
    ) -> str:
        """Why the list of one `session` and `prefix` is empty, in one sentence (reasons.py).

        Args:
            session: the queries asked about, oldest first.
            prefix: what was typed of the next query.
            answered: the texts the model answered for them ("" for an empty slot).
            history: the earlier queries sent with them; None: none.

        Returns:
            The reason, most specific first (an Answer's `why`).

        Example:
            >>> import mtn_keras
            >>> mtn_keras.load("default").why([], "", [])
            'The session holds no query with words and nothing was typed.'
        """
        return why_empty(session, prefix, answered, self.settings, history)

    def attention(self, session: Session) -> Attention | list[Attention]:
        """The session encoder's attention over the queries the model kept.

        From the suggestions' signature when it answers it (`answers_attention`), else from
        the `session_attention` signature.

        Args:
            session: the queries so far, oldest first; or a batch, a list of such lists.

        Returns:
            An Attention (weights [layers, heads, K, K], the K queries as read, their
            places in the session); a list of them for a batch.

        Raises:
            SuggestError: bad input, a failed call, or an answer that cannot be read.

        Example:
            >>> import mtn_keras
            >>> attention = mtn_keras.load("default").attention(["cheap flights", "??", "rome"])
            >>> attention.queries, attention.positions, attention.weights.shape
            (('cheap flights', 'rome'), (0, 2), (2, 4, 2, 2))
        """
        sessions, batched = sessions_of(session)
        if self.answers_attention:
            out = self._call(sessions, [""] * len(sessions), None)
            name = "session_attention"
        else:
            out = self._runner.run("session_attention", {"session": front_padded(sessions)})
            name = "attention"
        try:
            answers = attentions(out, name, sessions)
        except ValueError as error:
            raise SuggestError(
                f"{self.where} answered an attention that cannot be read (ValueError: {error})"
            ) from None
        return answers if batched else answers[0]

    def check_history(self) -> None:
        """Asks, before many calls, whether the model reads a history.

        Raises:
            SuggestError: the model reads none (no `complete_with_history` signature).

        Example:
            >>> import mtn_keras
            >>> mtn_keras.load("default").check_history()  # the bundled model reads one
        """
        if not self.reads_history:
            raise SuggestError(
                f"{self.where} does not read a history (no complete_with_history signature): "
                "rank its run folder (python -m mtn_keras.rank) and export it again, or call "
                "without history"
            )

    def _call(self, sessions, prefixes, histories):
        """The outputs of the one signature every list comes from (`answering`), with an
        empty history when none is given."""
        inputs = {"session": front_padded(sessions), "prefix": prefixes}
        if histories is not None:
            self.check_history()
            inputs["history"] = front_padded(histories)
        elif self.answering == "complete_with_history":
            inputs["history"] = [[]] * len(sessions)
        return self._runner.run(self.answering, inputs)
