"""The named tuples the serving steps hand each other (steps.py): a batch read, the pool's
candidates ready to score, what the search found, and the route up to the ranking."""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from mtn_keras.ranking.candidates import Pool
from mtn_keras.ranking.scoring import Scored
from mtn_keras.ranking.shown import Table
from mtn_keras.serving.encoding import Encoded
from mtn_keras.serving.prefix import Typed


class Prepared(NamedTuple):
    """A batch read: its `session` (encoding.Encoded, slips corrected), what was `typed`
    (prefix.Typed; None without a prefix), the rows whose typed words vouch for their
    completions (`vouched` [B]), those where the last query was typed again with a slip
    (`retyped` [B], candidates.retyped) and the characters of the typed word known nowhere,
    the only place a slip is read (`span` [B, 2], word_starts.slip_span)."""

    session: Encoded
    typed: Typed | None
    vouched: tf.Tensor
    retyped: tf.Tensor
    span: tf.Tensor


class Pooled(NamedTuple):
    """The pool's candidates (`gathered`, candidates.Pool: texts [B, C] and what they were
    gathered from) with their `words` [B, C, n] and token `ids` [B, C, n] for the search
    to score."""

    gathered: Pool
    words: tf.Tensor
    ids: tf.Tensor


class Found(NamedTuple):
    """What the search found: the `beam`'s n-best (scoring.Scored, [B, K, ...]) with their
    length-normalised `scores` [B, K] (-inf: none), the model's scores of the pool's
    candidates (`pooled`, scoring.Scored; None without a pool), the `session_attention`
    [B, layers, heads, max_queries, max_queries] and, when the model reads the history (its
    third level), its `history_attention` over the kept history [B, T] (else None)."""

    beam: Scored
    scores: tf.Tensor
    pooled: Scored | None
    session_attention: tf.Tensor
    history_attention: tf.Tensor | None


class Routed(NamedTuple):
    """A batch on the route up to the ranking (SuggestionSteps.routed): the `kept` history
    [B, T], the batch `prepared`, the `pooled` candidates (None without a ranking), what the
    search `found`, every candidate once (`table`, shown.Table) and which are `valid` [B, M]
    (listed and passing the filters)."""

    kept: tf.Tensor
    prepared: Prepared
    pooled: Pooled | None
    found: Found
    table: Table
    valid: tf.Tensor
