"""The model's own score of given candidates: their teacher-forced log-probabilities, equal
to what the decoding step interface (`start`/`step`), and so the beam search, gives them.

Two parts, so that the costly one does only real work: `candidate_hidden` runs the decoder
over every candidate slot in one pass (static shapes, inside the XLA-compiled search);
`candidate_log_probs` projects only the real positions of the candidates offered onto the
vocabulary (dynamic shapes, outside XLA). Most slots are empty or short, and the projection
onto the vocabulary is most of the cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, UNK

if TYPE_CHECKING:
    from mtn_keras.models.base import SuggestionModel


class Scored(NamedTuple):
    """Candidates with the model's scores of them: `words` [B, M, L] ("" padding),
    `log_probs` [B, M] (the sum over the words and eos; -inf for none), `lengths` [B, M],
    `unknown` [B, M] (its words the model cannot write) and `copied` [B, M, X] (the copy
    weights summed over the words)."""

    words: tf.Tensor
    log_probs: tf.Tensor
    lengths: tf.Tensor
    unknown: tf.Tensor
    copied: tf.Tensor


def decoder_io(ids: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Candidate ids [N, L] (0-padded, no eos) -> decoder inputs and targets [N, L + 1]
    (<bos> + words; words + <eos>) and lengths [N]."""
    length = ids.shape[1]
    lengths = tf.reduce_sum(tf.cast(ids != PAD, tf.int32), axis=1)
    inputs = tf.concat([tf.fill([tf.shape(ids)[0], 1], BOS), ids], axis=1)
    ends = tf.range(length + 1)[None, :] == lengths[:, None]
    targets = tf.where(ends, EOS, tf.pad(ids, [[0, 0], [0, 1]]))
    return inputs, targets, lengths


def candidate_hidden(model: SuggestionModel, state: dict[str, Any], ids: tf.Tensor) -> tf.Tensor:
    """Decoder states [B*C, L+1, d] of the candidates ids [B, C, L] after the sessions
    whose `model.start` state is `state` (leading dimension B), all in one pass."""
    count = tf.shape(ids)[1]
    inputs, _, _ = decoder_io(tf.reshape(ids, [-1, ids.shape[2]]))
    state = tf.nest.map_structure(lambda x: tf.repeat(x, count, axis=0), state)
    return model.teacher_forced_hidden(inputs, state)


def candidate_log_probs(
    model: SuggestionModel, state: dict[str, Any], ids: tf.Tensor, hidden: tf.Tensor
) -> dict[str, tf.Tensor]:
    """Log-probabilities of the candidates ids [B, C, L] (source-extended, 0-padded, no
    eos) from their decoder states `hidden` (candidate_hidden) and the `start` state.

    Returns `log_probs` [B, C], the sum over the words and eos (-inf for an empty slot),
    `lengths` [B, C], `unknown` [B, C], its words the model cannot write (outside the
    vocabulary and the session: scored as the model's rarest word, see
    `models.base.unknown_as_rarest`), and `copied` [B, C, X]: the copy weights summed over
    the words (the beam search's trace)."""
    batch, count = tf.shape(ids)[0], tf.shape(ids)[1]
    _, targets, lengths = decoder_io(tf.reshape(ids, [-1, ids.shape[2]]))
    positions = tf.range(ids.shape[2] + 1)[None, :]
    real = tf.where((positions <= lengths[:, None]) & (lengths[:, None] > 0))  # [T, 2]
    row = real[:, 0]
    context = {
        key: tf.gather(value, row // tf.cast(count, tf.int64))
        for key, value in state["context"].items()
        if key in ("source_ext", "copy_keys", "copy_memory")
    }
    picked, copy = model.target_log_probs(
        tf.gather_nd(hidden, real), tf.gather_nd(targets, real), {"context": context}
    )
    rows = tf.shape(lengths, out_type=tf.int64)[0]
    total = tf.math.unsorted_segment_sum(picked, row, rows)
    total = tf.where(lengths > 0, total, float("-inf"))
    if copy is None:  # no copy head
        copied = tf.zeros([rows, tf.shape(state["context"]["source_ext"])[1]])
    else:
        word = tf.gather_nd(positions < lengths[:, None], real)
        copied = tf.math.unsorted_segment_sum(tf.where(word[:, None], copy, 0.0), row, rows)
    unknown = tf.reduce_sum(tf.cast(tf.reshape(ids, [-1, ids.shape[2]]) == UNK, tf.int32), axis=1)
    return {
        "log_probs": tf.reshape(total, [batch, count]),
        "lengths": tf.reshape(lengths, [batch, count]),
        "unknown": tf.reshape(unknown, [batch, count]),
        "copied": tf.reshape(copied, [batch, count, -1]),
    }
