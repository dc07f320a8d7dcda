"""Query normalisation in TensorFlow ops, from `data.text`'s own character tables, so that the
SavedModel reads a query exactly as `prepare` did (TensorFlow's lower-casing and regular
expressions use other Unicode tables, and `tf.strings.lower` stops at a NUL byte); and words
joined back into queries."""

import tensorflow as tf

from mtn_keras.data.text import character_tables

# Words longer than this (and than every vocabulary word) are cut: a 100,000-character
# "word" would otherwise come back whole in every suggestion that copies or completes it.
MAX_WORD_CHARS = 64


class QueryNormaliser(tf.Module):
    """`data.text.normalise` for string tensors of any shape; invalid UTF-8 becomes U+FFFD."""

    def __init__(self, max_word_chars=MAX_WORD_CHARS):
        super().__init__()
        bounds, lower = character_tables()
        self.bounds = tf.constant(bounds, tf.int32)
        self.lower = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(list(lower), list(lower.values())), ""
        )
        self.max_word_chars = max_word_chars

    def is_separator(self, codes):
        """Code points (int32, any shape) -> True where the character separates words."""
        flat = tf.reshape(codes, [-1])
        inside = tf.searchsorted(self.bounds, flat, side="right") % 2 == 1
        return tf.reshape(inside, tf.shape(codes))

    def __call__(self, text):
        """Normalised text: lowercase, separators to spaces, single-spaced, long words cut."""
        flat_text = tf.reshape(text, [-1])
        chars = tf.strings.unicode_split(flat_text, "UTF-8", errors="replace")
        codes = tf.strings.unicode_decode(flat_text, "UTF-8", errors="replace")
        lowered = self.lower.lookup(chars.values)
        form = tf.where(self.is_separator(codes.values), " ",
                        tf.where(lowered == "", chars.values, lowered))
        words = tf.strings.split(tf.strings.reduce_join(chars.with_values(form), axis=1), " ")
        cut = words.with_values(
            tf.strings.substr(words.values, 0, self.max_word_chars, unit="UTF8_CHAR")
        )
        joined = tf.strings.reduce_join(tf.ragged.boolean_mask(cut, cut != ""), axis=1, separator=" ")
        return tf.reshape(joined, tf.shape(text))

    def ends_open(self, text):
        """Text [B] -> True where its last character is not a separator (a word being typed)."""
        codes = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        padded = tf.concat([codes.values, [0]], axis=0)  # an index for empty texts
        last = tf.gather(padded, tf.maximum(codes.row_limits() - 1, 0))
        return (codes.row_lengths() > 0) & ~self.is_separator(last)


def single_spaced(text):
    """Runs of spaces to one, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, " +", " "))


def joined(words):
    """Words [..., L] -> the strings they make, single-spaced."""
    return single_spaced(tf.strings.reduce_join(words, axis=-1, separator=" "))
