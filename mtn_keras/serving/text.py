"""Query normalisation in TensorFlow ops, from `data.text`'s own character tables, so that the
SavedModel reads a query exactly as `prepare` did (TensorFlow's lower-casing and regular
expressions use other Unicode tables, and `tf.strings.lower` stops at a NUL byte); queries
to tokens (words, or WordPiece pieces) as `Vocabulary.split` makes them; tokens joined back
into queries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.data.text import character_tables
from mtn_keras.data.vocab import UNK
from mtn_keras.data.wordpiece import SUFFIX, is_piece_vocabulary
from mtn_keras.ranking.words import joined

if TYPE_CHECKING:
    from mtn_keras.ranking.tables import SavedTable

# Words longer than this (and than every vocabulary word) are cut: a 100,000-character
# "word" would otherwise come back whole in every suggestion that copies or completes it.
MAX_READ_WORD_CHARS = 64


class QueryNormaliser(tf.Module):
    """`data.text.normalise` for string tensors of any shape; invalid UTF-8 becomes U+FFFD."""

    def __init__(self, max_word_chars: int = MAX_READ_WORD_CHARS) -> None:
        super().__init__()
        bounds, lower = character_tables()
        self.bounds = tf.constant(bounds, tf.int32)
        self.lower = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(list(lower), list(lower.values())), ""
        )
        self.max_word_chars = max_word_chars

    def is_separator(self, codes: tf.Tensor) -> tf.Tensor:
        """Code points (int32, any shape) -> True where the character separates words."""
        flat = tf.reshape(codes, [-1])
        inside = tf.searchsorted(self.bounds, flat, side="right") % 2 == 1
        return tf.reshape(inside, tf.shape(codes))

    def __call__(self, text: tf.Tensor) -> tf.Tensor:
        """Normalised text: lowercase, separators to spaces, single-spaced, long words cut."""
        flat_text = tf.reshape(text, [-1])
        chars = tf.strings.unicode_split(flat_text, "UTF-8", errors="replace")
        codes = tf.strings.unicode_decode(flat_text, "UTF-8", errors="replace")
        lowered = self.lower.lookup(chars.values)
        form = tf.where(
            self.is_separator(codes.values), " ", tf.where(lowered == "", chars.values, lowered)
        )
        # Dense joins ("" padding): a ragged one costs the graph a hundred nodes each time.
        spaced = tf.strings.reduce_join(chars.with_values(form).to_tensor(""), axis=1)
        words = tf.strings.split(spaced, " ")
        cut = words.with_values(
            tf.strings.substr(words.values, 0, self.max_word_chars, unit="UTF8_CHAR")
        )
        return tf.reshape(joined(cut.to_tensor("")), tf.shape(text))

    def ends_open(self, text: tf.Tensor) -> tf.Tensor:
        """Text [B] -> True where its last character is not a separator (a word being typed)."""
        codes = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        padded = tf.concat([codes.values, [0]], axis=0)  # an index for empty texts
        last = tf.gather(padded, tf.maximum(codes.row_limits() - 1, 0))
        return (codes.row_lengths() > 0) & ~self.is_separator(last)


class Tokeniser(tf.Module):
    """`Vocabulary.split` for string tensors: texts [...] -> ragged tokens [..., (tokens)].

    Under a WordPiece vocabulary each word is spelt greedily, longest piece first, in a loop
    over all the words at once (core ops only: substrings and the vocabulary's hash table,
    `table`: token -> id, <unk> for the others); a word that cannot be spelt stays whole.
    Under a word vocabulary the tokens are the words.
    """

    def __init__(self, vocab_tokens: Sequence[str], table: SavedTable) -> None:
        super().__init__()
        self.pieces = is_piece_vocabulary(vocab_tokens)
        self.table = table
        self.longest = max(len(t.removeprefix(SUFFIX)) for t in vocab_tokens)

    def __call__(self, texts: tf.Tensor) -> tf.RaggedTensor:
        return self.of_words(tf.strings.split(texts))

    def of_words(self, words: tf.RaggedTensor) -> tf.RaggedTensor:
        """Words, ragged [..., (words)] -> their tokens, ragged [..., (tokens)]."""
        if not self.pieces:
            return words
        return words.with_flat_values(self.spell(words.flat_values)).merge_dims(-2, -1)

    def spell(self, words: tf.Tensor) -> tf.RaggedTensor:
        """Words [W] -> their pieces, ragged [W, (pieces)]; an unspellable word whole."""
        length = tf.strings.length(words, unit="UTF8_CHAR")
        shape = [tf.size(words), self.longest]
        sizes = tf.broadcast_to(tf.range(1, self.longest + 1)[None, :], shape)
        texts = tf.broadcast_to(words[:, None], shape)

        def step(
            position: tf.Tensor, failed: tf.Tensor, spelt: tf.Tensor
        ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
            active = (position < length) & ~failed
            heads = tf.strings.substr(
                texts, tf.broadcast_to(position[:, None], shape), sizes, unit="UTF8_CHAR"
            )
            heads = tf.where(position[:, None] > 0, SUFFIX + heads, heads)
            fits = (self.table.lookup(heads) != UNK) & (
                position[:, None] + sizes <= length[:, None]
            )
            best = tf.reduce_max(tf.where(fits, sizes, 0), axis=1)
            piece = tf.gather(heads, tf.maximum(best - 1, 0), batch_dims=1)
            spelt = tf.concat([spelt, tf.where(active & (best > 0), piece, "")[:, None]], axis=1)
            return position + best, failed | (active & (best == 0)), spelt

        position = tf.zeros_like(length)
        failed = tf.zeros_like(length, tf.bool)
        spelt = tf.zeros([tf.size(words), 0], tf.string)  # a column per piece
        _, failed, pieces = tf.while_loop(
            lambda position, failed, spelt: tf.reduce_any((position < length) & ~failed),
            step,
            (position, failed, spelt),
            shape_invariants=(position.shape, failed.shape, tf.TensorShape([None, None])),
        )
        pieces = tf.pad(pieces, [[0, 0], [0, 1]])  # a column even where no word is
        whole = tf.concat([words[:, None], tf.zeros_like(pieces[:, 1:])], axis=1)
        pieces = tf.where(failed[:, None], whole, pieces)
        return tf.RaggedTensor.from_tensor(pieces, padding="")


def detokenised(tokens: tf.Tensor) -> tf.Tensor:
    """Tokens [..., L] -> the texts they make: WordPiece pieces joined into their words."""
    text = joined(tokens)
    return tf.strings.regex_replace(
        tf.strings.regex_replace(text, " " + SUFFIX, ""), "^" + SUFFIX, ""
    )
