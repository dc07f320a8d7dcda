"""What a client answers, read once from a suggestion signature's outputs for every runner
(TensorFlow's bytes and numpy arrays, or a REST server's strings and lists): each session's
`Answer`, its `Suggestion`s and, where asked, what the model read (`Attention` among it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mtn_keras.client import checks
from mtn_keras.data.safety import may_show
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
    out (data/safety.py). A ValueError (checks.py) when `out` is not the outputs of a
    suggestion signature for them: a text that is no string, a score that is not a finite
    number (an empty slot's may be -inf), lists of different shapes."""
    count = len(sessions)
    texts = checks.texts(output(out, "suggestions"), "suggestions", (count, None))
    width = len(texts[0])
    scores = checks.numbers(output(out, "scores"), "scores", (count, width))
    empty = np.array(texts, dtype=object).reshape(count, width) == ""
    checks.finite(scores, "scores", used=~(empty & (scores == -np.inf)))
    sources = [[""] * width] * count
    if "sources" in out:
        sources = checks.texts(out["sources"], "sources", (count, width))
    found = _details(out, sessions, width) if details else [{} for _ in sessions]
    rows = []
    for row, row_scores, row_sources, row_found in zip(texts, scores, sources, found):
        copies = row_found.pop("copies", [None] * width)
        items = [
            Suggestion(text, float(score), source, copy)
            for text, score, source, copy in zip(row, row_scores, row_sources, copies)
            if text and may_show(text, explicit_shown)
        ]
        rows.append((items, row, row_found))
    return rows


def output(out: dict, name: str) -> Any:
    """`out[name]`; a ValueError when the signature answered no such output."""
    if name not in out:
        raise ValueError(f"no `{name}` output")
    return out[name]


def _details(out, sessions, width):
    """What the model read for each row of `out` (the Answer's details), and `copies`: each
    suggestion's copy attention over the queries that are not padding."""
    count = len(sessions)
    tokens = checks.texts(output(out, "source_tokens"), "source_tokens", (count, None, None))
    slots = len(tokens[0])
    words = len(tokens[0][0]) if slots else 0
    shape = (count, width, slots, words)
    copies = checks.numbers(output(out, "copy_attention"), "copy_attention", shape)
    history = weights = None
    if "history" in out:
        history = checks.texts(out["history"], "history", (count, None))
        size = len(history[0])
        weights = checks.numbers(
            output(out, "history_attention"), "history_attention", (count, size)
        )
    views = None
    if "session_attention" in out and "queries" in out:
        views = attentions(out, "session_attention", sessions)
    found = []
    for i, session in enumerate(sessions):
        used = np.array([any(query) for query in tokens[i]], dtype=bool)
        kept = list(np.flatnonzero(used))
        row = {"source_tokens": [tokens[i][j] for j in kept]}
        checks.finite(copies[i], f"copy_attention[{i}]", used[None, :, None])
        row["copies"], row["positions"] = copies[i][:, kept], used_queries(session, len(kept))
        if history is not None and weights is not None:
            read = np.array([bool(query) for query in history[i]], dtype=bool)
            row["history"] = [query for query in history[i] if query]
            checks.finite(weights[i], f"history_attention[{i}]", read)
            row["history_attention"] = weights[i][read]
        if views is not None:
            row["attention"] = views[i]
        found.append(row)
    return found


def attentions(out: dict, name: str, sessions: list[list[str]]) -> list[Attention]:
    """The Attention of each of `sessions` from `out[name]` [B, layers, heads, S, S] and, when
    the model answers them, `out["queries"]` [B, S], its readings of the S query slots ("" for
    padding); a ValueError when they are not that."""
    weights = checks.rows(output(out, name), name, len(sessions))
    queries = out.get("queries")
    if queries is not None:
        queries = checks.rows(queries, "queries", len(sessions))
    return [
        _kept_attention(
            weights[i], None if queries is None else queries[i], session, f"[{i}]", name
        )
        for i, session in enumerate(sessions)
    ]


def _kept_attention(weights, queries, session, row, name):
    """An Attention of `weights` [layers, heads, S, S] (`name` and `row` say where they came
    from) over `session` without the padding slots (an empty entry in `queries`; when the
    model does not say, none was dropped: the last S queries with words)."""
    weights = checks.numbers(weights, name + row, (None, None, None, None))
    slots = weights.shape[-1]
    if weights.shape[-2] != slots:
        raise ValueError(f"{name + row} is {list(weights.shape)}: not S x S over its queries")
    if queries is None:
        positions = used_queries(session, slots)
        read = tuple(normalise(session[i]) for i in positions)
        return Attention(checks.finite(weights, name + row), read, tuple(positions))
    texts = checks.texts(queries, "queries" + row, (slots,))
    used = np.array([bool(text) for text in texts], dtype=bool)
    checks.finite(weights, name + row, used[:, None] & used[None, :])
    kept = list(np.flatnonzero(used))
    read = tuple(texts[i] for i in kept)
    weights = weights[:, :, kept][:, :, :, kept]
    return Attention(weights, read, tuple(used_queries(session, len(read))))


def used_queries(session: list[str], kept: int) -> list[int]:
    """The 0-based session positions of the `kept` queries the model used: it drops queries
    without words and keeps the last ones of the rest (the graph says which readings it kept,
    not where they stand in the session)."""
    with_words = [index for index, query in enumerate(session) if normalise(query)]
    return with_words[len(with_words) - kept :] if kept else []
