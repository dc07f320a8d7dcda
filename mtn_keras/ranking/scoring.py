"""The model's own score of given candidates: teacher-forced log-probabilities through the
decoding step interface (`start`/`step`), so every model scores candidates the way its beam
search scores hypotheses."""

import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD


def candidate_log_probs(model, state, ids):
    """Log-probabilities of candidate queries after the sessions whose `model.start` state
    is `state` (leading dimension B).

    ids int32 [B, C, L]: the candidates' (source-extended) ids, 0-padded, no eos.
    Returns `log_probs` [B, C], the sum over the words and eos, `lengths` [B, C], and
    `copied` [B, C, X]: the copy weights summed over the words (the beam search's trace).
    """
    batch, count, length = tf.shape(ids)[0], tf.shape(ids)[1], tf.shape(ids)[2]
    flat = tf.reshape(ids, [-1, length])
    lengths = tf.reduce_sum(tf.cast(flat != PAD, tf.int32), axis=1)
    inputs = tf.concat([tf.fill([tf.shape(flat)[0], 1], BOS), flat], axis=1)
    targets = tf.pad(flat, [[0, 0], [0, 1]])
    targets = tf.where(tf.range(length + 1)[None, :] == lengths[:, None], EOS, targets)
    state = tf.nest.map_structure(lambda x: tf.repeat(x, count, axis=0), state)

    def body(t, state, total, copied):
        log_probs, state = model.step(inputs[:, t], state, t)
        picked = tf.gather(tf.cast(log_probs, tf.float32), targets[:, t], batch_dims=1)
        total += tf.where(t <= lengths, picked, 0.0)
        copied = tf.where((t < lengths)[:, None], state["copied"], copied)
        return t + 1, state, total, copied

    total = tf.zeros([tf.shape(flat)[0]])
    copied = tf.zeros_like(state["copied"])
    _, _, total, copied = tf.while_loop(
        lambda t, *_: t <= tf.reduce_max(lengths), body, (tf.constant(0), state, total, copied),
        maximum_iterations=length + 1,
    )
    return {
        "log_probs": tf.reshape(total, [batch, count]),
        "lengths": tf.reshape(lengths, [batch, count]),
        "copied": tf.reshape(copied, [batch, count, -1]),
    }
