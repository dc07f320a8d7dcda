"""One client for every model: `mtn_keras.load(model)` opens a run folder, an export, the
bundled model or a TensorFlow Serving REST endpoint behind one interface (`Suggester`) that
answers plain dataclasses.

A Suggester's `suggest(session, history=None)` and `complete(session, prefix, history=None)`
answer an Answer: a list of Suggestion(text, score, source), best first (the log's popular
queries after the ranked ones, docs/contracts.md), whose `why` says in one sentence why it is
empty ("" when it is not), and with `details=True` what the model read (copy and session
attention, the history kept); its `attention(session)` an Attention(weights, queries,
positions). A session is a list of query strings, oldest first; a batch, a list of sessions,
gets a list of answers.

Importing it imports no TensorFlow: a local model imports it when it is opened, and a server's
model never does.
"""

import os
import re

from mtn_keras.base.config import DecodeConfig
from mtn_keras.client.answer import Answer, Attention, Suggestion
from mtn_keras.client.remote import Rest, is_url, redacted
from mtn_keras.client.suggester import Suggester
from mtn_keras.serving.savedmodel import SuggestError

__all__ = ["Answer", "Attention", "SuggestError", "Suggester", "Suggestion", "load"]


def load(
    model: str | os.PathLike, decoding: DecodeConfig | None = None, timeout: float = 30.0
) -> Suggester:
    """Open `model` for suggestions.

    Args:
        model: where the model is. `"default"`: the bundled model. A run folder of
            `python -m mtn_keras.train` (it holds `model.keras`). A SavedModel directory of
            `python -m mtn_keras.export`, or a folder holding one in `savedmodel/`. Or the
            REST address of a served model, `http://HOST:PORT/v1/models/NAME` (this
            project's `python -m mtn_keras.serve` or TensorFlow Serving).
        decoding: for a run folder, the search and ranking settings (a
            `mtn_keras.base.config.DecodeConfig`; its defaults when None). An export's were
            fixed when it was exported. Its `explicit` says whether sexually explicit
            suggestions may be shown, for every model (off by default; one that seeks sexual
            content involving minors never is).
        timeout: for a REST address, the seconds each request may take (above 0, at most
            a day).

    Returns:
        A Suggester: its `suggest`, `complete` and `attention` (the module's docstring says
        what each answers).

    Raises:
        SuggestError: for a path that is no model, an address or timeout that is not one,
            an unreachable server, bad input, a failed call or an answer that is not one; the
            message says what and where (an address without its user and password).

    Example:
        >>> import mtn_keras
        >>> model = mtn_keras.load("default")
        >>> best = model.complete(["cheap flights", "rome hotels"], "hotel")[0]
        >>> best.text.startswith("hotel"), 0 < best.score <= 1
        (True, True)
        >>> best  # doctest: +ELLIPSIS
        Suggestion(text='hotel...', score=0..., source='...')
        >>> model.suggest([]).why
        'The session holds no query with words and nothing was typed.'
        >>> model.attention(["cheap flights", "rome hotels"]).queries
        ('cheap flights', 'rome hotels')
        >>> model.suggest([["weather"], [1]])
        Traceback (most recent call last):
        mtn_keras.serving.savedmodel.SuggestError: session 1, item 0: 1 is a int, not a string
    """
    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise SuggestError(
            f"model is {model!r:.60}: give `default`, a run folder, a SavedModel directory or "
            "http://HOST:PORT/v1/models/NAME (a string or a path)"
        )
    explicit_shown = decoding is not None and decoding.explicit
    if is_url(model):
        server = Rest(model, timeout)
        return Suggester(server, server.url, explicit_shown)  # messages name it, no password
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", str(model)):
        raise SuggestError(f"{redacted(str(model))}: a server is asked over http:// or https://")
    from mtn_keras.client.local import open_local

    runner, where = open_local(model, decoding)
    return Suggester(runner, where, explicit_shown)
