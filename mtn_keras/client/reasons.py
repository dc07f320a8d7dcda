"""Why a session's list of suggestions is empty, in one sentence a person can read: decided
here from what was asked and what the model answered, so that every client (a model in this
process, a server over REST, the app) says the same for the same input."""

from mtn_keras.data.safety import child_unsafe
from mtn_keras.data.text import normalise


def why_empty(
    session: list[str],
    prefix: str,
    answered: list[str],
    settings: dict | None = None,
    history: list[str] | None = None,
) -> str:
    """Why no suggestion is shown for `session` (its queries, oldest first) and the typed
    `prefix`, most specific reason first. `answered`: the model's suggestion texts for it ("" for
    a slot it left empty; the others were all withheld by the safety rule, data/safety.py);
    `settings`: export.json's, for the ranker's thresholds; `history`: the searcher's earlier
    queries sent with the session (None: none)."""
    typed, words = prefix.strip(), normalise(prefix)
    withheld = [text for text in answered if text]
    if withheld:
        reason = _withheld(withheld)
    elif words:
        return f"No known query starts like “{typed}”."
    elif any(normalise(query) for query in session):
        reason = "nothing the model was confident enough of passed its filters"
        reason += _thresholds(settings or {}, any(normalise(query) for query in history or ()))
    elif typed:
        reason = "the session holds no query with words"
    else:
        return "The session holds no query with words and nothing was typed."
    if typed and not words:
        reason = f"“{typed}” holds no word, so it is read as nothing typed, and {reason}"
    return reason[0].upper() + reason[1:] + "."


def _withheld(texts):
    """The clause saying that the model's `texts` were all withheld, and as what."""
    unsafe = [child_unsafe(normalise(text)) for text in texts]
    kind = "sexually explicit or unsafe" if any(unsafe) else "sexually explicit"
    kind = "unsafe" if all(unsafe) else kind
    if len(texts) == 1:
        return f"the model's one suggestion was withheld as {kind}"
    return f"the model's {len(texts)} suggestions were all withheld as {kind}"


def _thresholds(settings, with_history):
    """The ranker's threshold as export.json gives it, in parentheses ("" when it does not),
    with the history's own when a history was sent and it differs."""
    ranking = settings.get("ranking")
    ranking = ranking if isinstance(ranking, dict) else {}
    plain, own = (ranking.get(key) for key in ("threshold", "history_threshold"))
    if not _number(plain):
        return ""
    if with_history and _number(own) and own != plain:
        return f" (its threshold: {plain:.3g}; {own:.3g} for your history's queries)"
    return f" (its threshold: {plain:.3g})"


def _number(value):
    """Whether `value` is a number read from JSON (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
