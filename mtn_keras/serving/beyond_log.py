"""Completions beyond the log: where the log completes nothing typed ("boston weat" in a log
that never paired the two words), a second search lets the beam write any English word of
its vocabulary (grounding.py, `loose` rows) and shows the phrases the model is sure of, under
every filter the other items pass (docs/ranking.md, "Beyond the log")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.ranking.shown import NEG_INF, Shown, Table, beam_only, beam_table

if TYPE_CHECKING:
    from mtn_keras.ranking.scoring import Scored
    from mtn_keras.serving.step_data import Found


def confidence(beam: Scored) -> tf.Tensor:
    """[B, K]: the model's mean probability of each word (and the end) of the beam's phrases,
    the typed words included; 0 for none."""
    mean = beam.log_probs / tf.cast(tf.maximum(beam.lengths, 1), beam.log_probs.dtype)
    return tf.exp(mean)


def beyond_log(
    shown: Shown,
    vouched: tf.Tensor,
    search: Callable[[tf.Tensor], Found],
    filtered: Callable[[Table], tf.Tensor],
    witness: tf.Tensor,
    least: float,
) -> Shown:
    """The `shown` lists, each empty one whose typed words vouch for completions (`vouched`
    [B]) filled by the phrases of `least` confidence or more that the loose search (`search`
    of the loose rows [B]) finds and `filtered` (a Table -> valid [B, M]) keeps, each with the
    `witness` [B, 1] of the beam's own lists; a batch with no empty list pays nothing."""
    empty = ~tf.reduce_any(shown.scores > NEG_INF, axis=1) & vouched

    def filled() -> Shown:
        found = search(empty)
        sure = confidence(found.beam)
        table = beam_table(found.beam, tf.where(found.scores > NEG_INF, sure, NEG_INF), witness)
        more = beam_only(table, filtered(table) & (sure >= least), tf.shape(shown.scores)[1])
        rows = empty[:, None]
        return Shown(
            tf.where(rows, more.scores, shown.scores),
            tf.where(rows, more.texts, shown.texts),
            tf.where(rows, more.sources, shown.sources),
            tf.where(rows[:, :, None], more.copied, shown.copied),
        )

    return tf.cond(tf.reduce_any(empty), filled, lambda: shown)
