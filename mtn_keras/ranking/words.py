"""Word tensors joined into query texts (core TensorFlow ops), shared by the ranking's
filters and the serving graph."""

import tensorflow as tf


def single_spaced(text: tf.Tensor) -> tf.Tensor:
    """Runs of spaces to one, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))


def joined(words: tf.Tensor) -> tf.Tensor:
    """Words [..., L] -> the strings they make, single-spaced."""
    return single_spaced(tf.strings.reduce_join(words, axis=-1, separator=" "))


def finished_words(text: tf.Tensor, open_word: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """Typed texts [B] (normalised) -> (how many words each holds [B], its finished words
    [B, W]: every word but an unfinished last one (`open_word` [B]), "" in its place)."""
    split = tf.strings.split(text).to_tensor("")
    count = tf.reduce_sum(tf.cast(split != "", tf.int32), axis=1)
    last = tf.range(tf.shape(split)[1])[None, :] == count[:, None] - 1
    return count, tf.where(last & open_word[:, None], "", split)
