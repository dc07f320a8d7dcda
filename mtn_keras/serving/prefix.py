"""What the user typed of the next query, as constraints on the suggestions of `complete`.

One rule for every source of candidates: the typed words that end in a space (or
punctuation) are finished and must stand whole at the start of a suggestion; a last word
with nothing after it is unfinished and is completed by any word that starts with it, the
typed word itself included ("hotel" gives "hotel deals" and "hotels"). A prefix with no
words (only spaces or punctuation) constrains nothing, and vouches for nothing: it is
answered as `suggest` answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import tensorflow as tf

from mtn_keras.ranking.prefix_lookup import completes
from mtn_keras.ranking.typos import near_prefix
from mtn_keras.ranking.words import joined

if TYPE_CHECKING:
    from mtn_keras.serving.encoding import Encoded, SessionEncoder


def starts_with(words: tf.Tensor, partial: tf.Tensor) -> tf.Tensor:
    """[B, M]: the words [B, M] that start with the row's `partial` [B] (never for "")."""
    size = tf.strings.length(partial)[:, None]
    head = tf.strings.substr(
        words, tf.zeros_like(words, tf.int32), tf.broadcast_to(size, tf.shape(words))
    )
    return (head == partial[:, None]) & (size > 0)


class Typed(NamedTuple):
    """What was typed, read once: the normalised `text` [B], whether its last word is
    unfinished (`open` [B]) and whether it holds a word at all (`has_word` [B]: it
    constrains and vouches)."""

    text: tf.Tensor
    open: tf.Tensor
    has_word: tf.Tensor


class PrefixConstraint(tf.Module):
    """The typed prefix of a batch, for the beam (tokens to force and the ids allowed to
    complete an unfinished word) and for candidate texts (which of them start with it).

    Args:
        encoder: the `SessionEncoder` (normalisation, tokens and ids).
        continuing: bool [V], the WordPiece pieces that continue a word ("##s").
    """

    def __init__(self, encoder: SessionEncoder, continuing: tf.Tensor) -> None:
        super().__init__()
        self.encoder = encoder
        self.continuing = continuing

    def read(self, prefix: tf.Tensor, text: tf.Tensor | None = None) -> Typed:
        """Prefixes [B] -> `Typed` (`text`, when the caller has normalised them already)."""
        text = self.encoder.normalise(prefix) if text is None else text
        return Typed(text, self.encoder.normalise.ends_open(prefix), text != "")

    def typed_words(self, typed: Typed, inputs: Encoded) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """What the user typed of the next query (`read`) -> (tokens to force [B, n], allowed
        [B, V_ext], allowed_at [B]). The unfinished last word is completed by the vocabulary
        or session tokens that start with it (a word's first piece, under WordPiece), when
        there are any, else kept as typed. Under WordPiece a finished last word is not
        continued by pieces, and an unfinished one that nothing completes may be."""
        encoder = self.encoder
        n, vocab_size = encoder.n, encoder.vocab_size
        words = tf.strings.split(typed.text).to_tensor("", shape=[None, n])
        batch = tf.shape(words)[0]
        count = tf.reduce_sum(tf.cast(words != "", tf.int32), axis=1)
        open_word = (count > 0) & typed.open
        last = tf.gather(words, tf.maximum(count - 1, 0), batch_dims=1)
        partial = tf.where(open_word, last, "")
        vocab = tf.broadcast_to(encoder.tokens[None, :], [batch, vocab_size])
        sources = tf.reshape(inputs.source, [batch, -1])
        allowed = tf.concat(
            [starts_with(vocab, partial), self.copyable(sources, partial, inputs)], axis=1
        )
        completes = open_word & tf.reduce_any(allowed, axis=1)
        at_last = tf.range(n)[None, :] == count[:, None] - 1
        finished = tf.where(at_last & completes[:, None], "", words)  # only the last word goes
        typed = (
            encoder.tokenise(joined(finished)).to_tensor("", shape=[None, n])
            if encoder.tokenise.pieces
            else finished
        )
        typed_count = tf.reduce_sum(tf.cast(typed != "", tf.int32), axis=1)
        at = tf.where(completes, typed_count, -1)
        if encoder.tokenise.pieces:
            ends_word = (count > 0) & ~open_word
            copied = tf.ones([tf.shape(allowed)[1] - vocab_size], tf.bool)
            starts = tf.concat([~self.continuing, copied], axis=0)
            allowed = tf.where(ends_word[:, None], starts[None, :], allowed)
            at = tf.where(ends_word, typed_count, at)
        return typed, allowed, at

    def copyable(self, sources: tf.Tensor, partial: tf.Tensor, inputs: Encoded) -> tf.Tensor:
        """[B, S*n]: extended id V + j is allowed when its source word starts with `partial`."""
        ext = tf.reshape(inputs.ext, tf.shape(sources)) - self.encoder.vocab_size
        match = starts_with(sources, partial) & (ext >= 0)
        slots = tf.one_hot(
            tf.where(match, ext, -1), tf.shape(sources)[1], on_value=True, off_value=False
        )
        return tf.reduce_any(slots, axis=1)

    @staticmethod
    def chars(typed: Typed) -> tf.Tensor:
        """[B]: what was typed (`read`) as the characters a candidate followed by a space
        starts with: a finished last word is followed by a space."""
        finished = ~typed.open & typed.has_word
        return tf.where(finished, typed.text + " ", typed.text)

    @classmethod
    def starts_with_typed(cls, texts: tf.Tensor, typed: Typed) -> tf.Tensor:
        """[B, C]: the candidate texts (normalised) that begin with what was typed (`read`):
        its finished words whole, an unfinished last word as the start of a word
        (prefix_lookup.completes)."""
        return completes(texts, cls.chars(typed))

    @classmethod
    def true_to(cls, texts: tf.Tensor, typed: Typed, span: tf.Tensor) -> tf.Tensor:
        """[B, C]: the candidate texts true to what was typed (`read`): they begin with it,
        or with it one edit inside its word known nowhere (`span` [B, 2],
        word_starts.slip_span); every text where nothing was typed."""
        chars = cls.chars(typed)
        near = near_prefix(texts, chars, span[:, 0] >= 0, span)
        return completes(texts, chars) | near | ~typed.has_word[:, None]


def constrained(log_probs: tf.Tensor, context: Mapping[str, tf.Tensor], t: tf.Tensor) -> tf.Tensor:
    """A step's log-probabilities [N, V_ext] where, at position `allowed_at`, only the
    `allowed` ids (those that complete an unfinished typed word) may follow."""
    block = (context["allowed_at"] == t)[:, None] & ~context["allowed"]
    return tf.where(block, float("-inf"), log_probs)
