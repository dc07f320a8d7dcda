"""What a hypothesis of the beam search may not be: one that repeats a word or a bigram of its
own (its next tokens blocked, -inf), or a duplicate of a better one (the same words in
another order). Fixed shapes and core TensorFlow ops, as the search itself (beam_search.py)."""

import tensorflow as tf

from mtn_keras.data.vocab import PAD

NEG_INF = float("-inf")


def collapse_duplicates(seqs: tf.Tensor, scores: tf.Tensor) -> tf.Tensor:
    """Set to -inf the score of every hypothesis whose multiset of ids equals a better one's.

    seqs int32 [B, M, L] (0-padded), scores float32 [B, M]; ties keep the earlier index.
    """
    keys = tf.sort(seqs, axis=-1)
    same = tf.reduce_all(keys[:, :, None, :] == keys[:, None, :, :], axis=-1)
    return tf.where(beaten(same, scores), NEG_INF, scores)


def beaten(same: tf.Tensor, scores: tf.Tensor) -> tf.Tensor:
    """[B, M]: an item `same` [B, M, M] as one of higher score, or as an earlier one of
    equal score."""
    index = tf.range(tf.shape(scores)[1])
    earlier = index[None, :] < index[:, None]
    better = (scores[:, None, :] > scores[:, :, None]) | (
        (scores[:, None, :] == scores[:, :, None]) & earlier[None]
    )
    return tf.reduce_any(same & better, axis=-1)


def block_repeated_words(
    log_probs: tf.Tensor, seqs: tf.Tensor, t: int | tf.Tensor, continuing: tf.Tensor | None = None
) -> tf.Tensor:
    """-inf for every token already in its hypothesis (`seqs` [N, L], generated before
    step t): no word twice in a suggestion. `continuing` (bool, by id; ids past its end take
    its last entry) marks the WordPiece pieces that continue a word ("##s"): they may come back."""
    earlier = tf.range(tf.shape(seqs)[1])[None, :] < t
    if continuing is not None:
        earlier &= ~tf.gather(continuing, tf.minimum(seqs, tf.shape(continuing)[0] - 1))
    ids = tf.where(earlier, seqs, PAD)  # column <pad> is never a result anyway
    rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
    indices = tf.reshape(tf.stack([rows, ids], axis=-1), [-1, 2])
    return tf.tensor_scatter_nd_min(log_probs, indices, tf.fill([tf.shape(indices)[0]], NEG_INF))


def block_repeated_bigrams(
    log_probs: tf.Tensor, previous: tf.Tensor, seqs: tf.Tensor, t: int | tf.Tensor
) -> tf.Tensor:
    """-inf for every token that would repeat a bigram of its hypothesis (the tokens that
    already followed `previous` [N] in `seqs` [N, L], generated before step t) or repeat
    `previous` itself. Fixed shapes (no tf.where of indices), which XLA compiles well."""
    earlier = tf.range(tf.shape(seqs)[1])[None, :] < t - 1
    hits = (seqs == previous[:, None]) & earlier
    # Non-hits point at column <pad>, which is never a result anyway.
    following = tf.where(hits, tf.roll(seqs, -1, axis=1), PAD)
    ids = tf.concat([following, previous[:, None]], axis=1)  # [N, L + 1]
    rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
    indices = tf.reshape(tf.stack([rows, ids], axis=-1), [-1, 2])
    return tf.tensor_scatter_nd_min(log_probs, indices, tf.fill([tf.shape(indices)[0]], NEG_INF))
