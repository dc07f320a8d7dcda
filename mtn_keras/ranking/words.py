"""Word tensors joined into query texts (core TensorFlow ops), shared by the ranking's
filters and the serving graph."""

import tensorflow as tf


def single_spaced(text):
    """Runs of spaces to one, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))


def joined(words):
    """Words [..., L] -> the strings they make, single-spaced."""
    return single_spaced(tf.strings.reduce_join(words, axis=-1, separator=" "))
