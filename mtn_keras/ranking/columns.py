"""Columns of the candidates of a batch as hybrid.py ranks them (core TensorFlow ops): which
named evidence columns are above 0, the k best by score with the same rows of other columns,
and the names of the sources that proposed each candidate."""

from collections.abc import Sequence

import tensorflow as tf

from mtn_keras.ranking.history_lookup import HISTORY_EVIDENCE


def evidence_of(evidence: tf.Tensor, names: Sequence[str], of: Sequence[str]) -> tf.Tensor:
    """[B, M]: whether any of the `names` columns of `evidence` [B, M, len(of)] (its
    columns named by `of`) is above 0."""
    columns = [of.index(name) for name in names]
    return tf.reduce_any(tf.gather(evidence, columns, axis=-1) > 0, axis=-1)


def typed_before(history: tf.Tensor) -> tf.Tensor:
    """[B, M]: the history's evidence says the user typed the candidate before."""
    return evidence_of(history, ("history_count",), HISTORY_EVIDENCE)


def top(scores: tf.Tensor, k: int, *columns: tf.Tensor) -> tuple[tf.Tensor, ...]:
    """The k best of scores [B, M] (-inf: not shown), with the same rows of each column."""
    scores, order = tf.math.top_k(scores, k)
    return (scores, *(tf.gather(c, order, batch_dims=1) for c in columns))


def source_names(*flags: tf.Tensor) -> tf.Tensor:
    """Bool masks [B, M] of (in_beam, from_log, from_history, from_session, fixed) ->
    "model", "log", "history", "session", "fixed" (it corrects a slip in what was typed) or
    their union ("model+log+history", "log+fixed")."""
    names = ("model", "log", "history", "session", "fixed")
    parts = [tf.where(flag, name + "+", "") for flag, name in zip(flags, names)]
    return tf.strings.regex_replace(tf.strings.join(parts), r"\+$", "")
