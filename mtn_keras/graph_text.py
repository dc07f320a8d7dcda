"""String ops of the serving graph (core TensorFlow): query normalisation as in
`data.text.normalise`, and words joined back into queries."""

import tensorflow as tf

SEPARATORS = r"[\pP\pS\pC\pZ]+"


def single_spaced(text):
    """Runs of spaces to one, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))


def normalise(text):
    """tf.string tensor -> normalised words joined by single spaces (as data.text.normalise)."""
    return single_spaced(
        tf.strings.regex_replace(tf.strings.lower(text, encoding="utf-8"), SEPARATORS, " ")
    )


def joined(words):
    """Words [..., L] -> the strings they make, single-spaced."""
    return single_spaced(tf.strings.reduce_join(words, axis=-1, separator=" "))
