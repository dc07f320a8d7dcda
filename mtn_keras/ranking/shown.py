"""Every candidate of a batch once, as the filters and the ranker read them (`Table`), and
the k each row shows (`Shown`); the beam's own lists (`beam_table`, `beam_only`) for a model
without a ranking, or beyond the log. Apart from the ranker (hybrid.py), so that what reads
a list (popular.py, serving/) need not import it."""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from mtn_keras.ranking.columns import top
from mtn_keras.ranking.filters import same_words_as_better
from mtn_keras.ranking.scoring import Scored
from mtn_keras.ranking.words import joined

NEG_INF = float("-inf")


class Table(NamedTuple):
    """Every candidate of a batch once, as the filters and the ranker read them: `texts`
    [B, M] ("" for none), `words` [B, M, L], `sources` [B, M] (source_names), `copied`
    [B, M, X] (copy weights), `listed` [B, M] (a candidate, its first time in the row; None:
    every one) and `witness` [B, M] (a witness for sharing no word with the session, see
    filters.keep). The beam's alone (`beam_table`) hold their length-normalised `scores`
    [B, M]; the ranked (HybridRanker.table) their `features` [B, M, F] and `fixed` (a
    slip corrected), `in_history` (typed by the user before) and `related` [B, M]
    (filters.related)."""

    texts: tf.Tensor
    words: tf.Tensor
    sources: tf.Tensor
    copied: tf.Tensor
    listed: tf.Tensor | None
    witness: tf.Tensor
    scores: tf.Tensor | None = None
    features: tf.Tensor | None = None
    fixed: tf.Tensor | None = None
    in_history: tf.Tensor | None = None
    related: tf.Tensor | None = None


class Shown(NamedTuple):
    """The k shown of each row, best first: `scores` [B, k] (-inf: none), `texts` [B, k],
    `sources` [B, k] and `copied` [B, k, X]."""

    scores: tf.Tensor
    texts: tf.Tensor
    sources: tf.Tensor
    copied: tf.Tensor


def beam_table(beam: Scored, scores: tf.Tensor, witness: tf.Tensor) -> Table:
    """The paper's setting: the beam's n-best (`beam`, scoring.Scored) as a `Table`, with
    their length-normalised `scores` [B, M] and the `witness` [B, 1] for all of them."""
    texts = joined(beam.words)
    sources = tf.fill(tf.shape(texts), "model")
    return Table(texts, beam.words, sources, beam.copied, None, witness, scores)


def beam_only(table: Table, valid: tf.Tensor, k: int) -> Shown:
    """The k best of the beam's `table` (`beam_table`) by their length-normalised
    log-probability, of those `valid` [B, M] (listed and passing the filters)."""
    scores = tf.where(valid, table.scores, NEG_INF)
    scores = tf.where(same_words_as_better(table.words, scores), NEG_INF, scores)
    return Shown(*top(scores, k, table.texts, table.sources, table.copied))
