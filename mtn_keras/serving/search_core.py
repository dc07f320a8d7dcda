"""The numeric core of the serving graph's `search` step (steps.py), XLA-compiled unless
switched off: the model's start, the beam search under its constraints (what was typed,
and with a log the phrases people type: grounding.py) and the decoder states of the log's
candidates (scored outside XLA, see ranking/scoring.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import tensorflow as tf

from mtn_keras.data.vocab import PAD
from mtn_keras.decoding import beam_search
from mtn_keras.ranking.scoring import candidate_hidden
from mtn_keras.serving.prefix import constrained

if TYPE_CHECKING:
    from mtn_keras.models.base import SuggestionModel
    from mtn_keras.serving.grounding import PhraseConstraint


class Settings(Protocol):
    """What the search reads of a `SuggestionSteps` (steps.py, which imports this module)."""

    model: SuggestionModel
    phrases: PhraseConstraint | None
    beam: int
    n: int
    alpha: float
    exact_stop: bool
    banned_ids: list[int]
    continuing: tf.Tensor
    pieces: bool


class SearchCore:
    """The search of a `SuggestionSteps` (its model, beam width, length normalisation,
    banned ids and phrase constraint), called with the arguments `search_args` makes. A
    plain object, not a tf.Module: the steps track the variables."""

    def __init__(self, steps: Settings, no_repeat_words: bool) -> None:
        self.model, self.phrases = steps.model, steps.phrases
        self.options = dict(
            beam_size=steps.beam,
            num_results=steps.beam,
            max_length=steps.n + 1,
            length_alpha=steps.alpha,
            trace=lambda s: s["model"]["copied"],
            exact_stop=steps.exact_stop,
            banned_ids=steps.banned_ids,
            no_repeat_words=no_repeat_words,
            continuing=steps.continuing if steps.pieces else None,
        )

    def __call__(
        self,
        tokens: tf.Tensor,
        ext: tf.Tensor,
        allowed: tf.Tensor | None = None,
        allowed_at: tf.Tensor | None = None,
        forced: tf.Tensor | None = None,
        candidates: tf.Tensor | None = None,
        history_tokens: tf.Tensor | None = None,
        grounding: dict[str, tf.Tensor] | None = None,
    ) -> dict[str, Any]:
        """The model's start (reading `history_tokens` when its third level does), the beam
        search (with the copy weights of each result as its trace) and the decoder states
        of the `candidates`, with the session attention."""
        start = self.model.start(tokens, ext, history_tokens=history_tokens)
        attention = start["context"].pop("session_attention")  # read by nothing below
        read = start["context"].pop("history_attention", None)
        state = {"model": start}
        if allowed is not None:
            state["context"] = {"allowed": allowed, "allowed_at": allowed_at}
        if grounding is not None:
            state["context"] = {**state.get("context", {}), **grounding}
            state["before"] = tf.fill([tf.shape(tokens)[0]], PAD)  # the token before the last
        found = beam_search(
            self.step, state, batch_size=tf.shape(tokens)[0], prefix=forced, **self.options
        )
        if candidates is not None:
            found["candidate_hidden"] = candidate_hidden(self.model, start, candidates)
            found["context"] = start["context"]
        if read is not None:
            found["history_attention"] = read
        return {**found, "session_attention": attention}

    def step(
        self, tokens: tf.Tensor, state: dict[str, Any], t: tf.Tensor
    ) -> tuple[tf.Tensor, dict[str, Any]]:
        """The model's step, under the typed prefix's constraint when the state has one, and
        writing only the log's phrases when it carries them (grounding.py)."""
        log_probs, model_state = self.model.step(tokens, state["model"], t)
        context = state.get("context", {})
        if "allowed" in context:
            log_probs = constrained(log_probs, context, t)
        state = {**state, "model": model_state}
        if "copy_keys" in context:  # the grounding's context: only with a phrase constraint
            assert self.phrases is not None
            log_probs = self.phrases.constrain(log_probs, tokens, state["before"], context, t)
            state["before"] = tokens
        return log_probs, state
