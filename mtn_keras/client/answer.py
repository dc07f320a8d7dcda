"""What a client answers, read once from a suggestion signature's outputs for every backend
(TensorFlow's bytes and numpy arrays, or a REST server's strings and lists): each session's
`Answer`, its `Suggestion`s and, where asked, what the model read (`Attention` among it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mtn_keras.data.safety import shown
from mtn_keras.data.text import normalise


@dataclass(frozen=True)
class Suggestion:
    """One suggested next query: its text, its score (the ranker's probability with a ranking,
    else the length-normalised log-probability), and who proposed it (`model`, `log`,
    `history`, `session`, `fixed` or their union such as `model+log`, or `popular`; "" when
    the model does not say). With the answer's details, `copy_attention` [S', n]: how much
    each word of the kept queries (Answer.source_tokens) it copied, per word it wrote.

    Example:
        >>> item = Suggestion("weather in boston", 0.0014, "history+fixed")
        >>> item.from_history, item.corrected, item == Suggestion("weather in boston", 0.0014,
        ...     "history+fixed")
        (True, True, True)
    """

    text: str
    score: float
    source: str = ""
    copy_attention: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def from_history(self) -> bool:
        """Whether the searcher's own history proposed it."""
        return "history" in self.source

    @property
    def corrected(self) -> bool:
        """Whether it completes what was typed only with a slip corrected (source `fixed`)."""
        return "fixed" in self.source.split("+")


@dataclass(frozen=True)
class Attention:
    """The session encoder's attention over the queries the model kept (padding removed).

    `weights` is [layers, heads, K, K], rows attending; `queries` the K kept queries as the
    model read them (normalised, a slip corrected), oldest first; `positions` their 0-based
    places in the session asked about (`Suggester.attention` has an example)."""

    weights: np.ndarray
    queries: tuple[str, ...]
    positions: tuple[int, ...] = ()


class Answer(list):
    """One session's answer: its Suggestions, best first (equal to the plain list), and `why`:
    "" when it holds any, else one sentence saying why it is empty (reasons.py).

    `session` and `prefix` are what was asked, `slots` how many suggestions the model's list
    holds at most (its k; 0 when not said). With details (`complete(..., details=True)`),
    what the model read: `source_tokens` (the kept queries' words, [S'][n], "" for padding
    within a query), `positions` (their 0-based places in the session), `history` (the earlier
    queries it kept) with `history_attention` (how much each counted), and `attention` (the
    session attention, when the signature answers it with the suggestions).

    Example:
        >>> answer = Answer([Suggestion("rome hotels", 0.01)], session=["cheap flights"])
        >>> answer == [Suggestion("rome hotels", 0.01)], answer.why, answer.session
        (True, '', ('cheap flights',))
        >>> empty = Answer(why="No known query starts like “zzq”.", prefix="zzq")
        >>> len(empty), empty.why
        (0, 'No known query starts like “zzq”.')
    """

    def __init__(
        self,
        items: Iterable[Suggestion] = (),
        why: str = "",
        *,
        session: Iterable[str] = (),
        prefix: str = "",
        slots: int = 0,
        **details: Any,
    ) -> None:
        super().__init__(items)
        self.why, self.session, self.prefix, self.slots = why, tuple(session), prefix, slots
        self.source_tokens = details.get("source_tokens", [])
        self.positions = details.get("positions", [])
        self.history = details.get("history", [])
        self.history_attention = details.get("history_attention")
        self.attention = details.get("attention")


def read_rows(
    out: dict, sessions: list[list[str]], explicit_shown: bool = False, details: bool = False
) -> list[tuple[list[Suggestion], list[str], dict]]:
    """[(the Suggestions shown, every text answered, the details)] for each row of a
    signature's outputs `out`, `sessions` the sessions asked: what may not be shown is left
    out (data/safety.py). Raises KeyError, TypeError, ValueError or IndexError when `out` is
    not the outputs of a suggestion signature."""
    scores = np.asarray(out["scores"], dtype=np.float32)
    texts = [[text_of(text) for text in row] for row in out["suggestions"]]
    if scores.ndim != 2 or [len(row) for row in texts] != [scores.shape[1]] * len(scores):
        raise ValueError("suggestions and scores differ in shape")
    sources = out.get("sources", np.full(scores.shape, ""))
    rows = []
    for i, (row, row_scores, row_sources) in enumerate(zip(texts, scores, sources)):
        found: dict = {}
        copies: list[None] | np.ndarray = [None] * len(row)
        if details:
            found = _details(out, i, sessions[i])
            copies = np.asarray(out["copy_attention"][i], np.float32)[:, found.pop("kept")]
        items = [
            Suggestion(text, float(score), text_of(source), copy)
            for text, score, source, copy in zip(row, row_scores, row_sources, copies)
            if text and shown(text, explicit_shown)
        ]
        rows.append((items, row, found))
    return rows


def _details(out, i, session):
    """What the model read for row `i` of `out` (the Answer's details), and `kept`: the rows
    of source_tokens that are queries, not padding."""
    tokens = [[text_of(word) for word in query] for query in out["source_tokens"][i]]
    kept = [row for row, query in enumerate(tokens) if any(query)]
    found = {"kept": kept, "source_tokens": [tokens[row] for row in kept]}
    found["positions"] = used_queries(session, len(kept))
    if "history" in out:
        history = [text_of(query) for query in out["history"][i]]
        read = [j for j, query in enumerate(history) if query]
        found["history"] = [history[j] for j in read]
        found["history_attention"] = np.asarray(out["history_attention"][i], np.float32)[read]
    if "session_attention" in out and "queries" in out:
        found["attention"] = kept_attention(out["session_attention"][i], out["queries"][i], session)
    return found


def kept_attention(weights: ArrayLike, queries: Iterable | None, session: list[str]) -> Attention:
    """An Attention of `weights` [layers, heads, S, S] over `session` without the padding slots
    (an empty entry in `queries`; when the model does not say, none was dropped: the last
    S queries with words)."""
    weights = np.asarray(weights, np.float32)
    if queries is None:
        positions = used_queries(session, weights.shape[-1])
        return Attention(weights, tuple(normalise(session[i]) for i in positions), tuple(positions))
    texts = [text_of(query) for query in queries]
    kept = [i for i, text in enumerate(texts) if text]
    weights = weights[:, :, kept][:, :, :, kept]
    read = tuple(texts[i] for i in kept)
    return Attention(weights, read, tuple(used_queries(session, len(read))))


def used_queries(session: list[str], kept: int) -> list[int]:
    """The 0-based session positions of the `kept` queries the model used: it drops queries
    without words and keeps the last ones of the rest (the graph says which readings it kept,
    not where they stand in the session)."""
    with_words = [index for index, query in enumerate(session) if normalise(query)]
    return with_words[len(with_words) - kept :] if kept else []


def text_of(value: object) -> str:
    """A string output as text: TensorFlow answers bytes, a REST server strings."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
