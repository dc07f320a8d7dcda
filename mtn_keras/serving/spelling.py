"""Known words inside the serving graph: which words a shown suggestion may hold (`nonwords`
filter), and a session query's slips read through their corrections.

A known word is one of the vocabulary or of the query log (with a ranking), one of the
session's or of the user's history, or a typed word that is finished and no slip; the
unfinished word being typed counts only once completed into a known word, so a fragment
continued into a phrase ("labradood puppies", "weahter for sale") is never shown. A session
word that is not known and has MIN_CHARS or more characters is read as the most frequent
vocabulary word one edit away (typos.edit_variants), when there is one: "weahter boston"
as "weather boston". Under a WordPiece vocabulary without a ranking nothing tells a word
from a fragment: there every word counts as known and no session word is corrected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.data.vocab import SPECIALS, UNK
from mtn_keras.ranking.log_lookup import fingerprints
from mtn_keras.ranking.typos import LAST_RESORT_CHARS, MIN_CHARS, edit_variants
from mtn_keras.ranking.words import finished_words, joined
from mtn_keras.serving.grounding import word_keys

if TYPE_CHECKING:
    from mtn_keras.ranking.log_lookup import Corrections
    from mtn_keras.ranking.tables import SavedTable
    from mtn_keras.serving.encoding import SessionEncoder
    from mtn_keras.serving.prefix import Typed


def sorted_hashes(words: tf.Tensor) -> tf.Tensor:
    """Words [B, X] -> their int64 keys (grounding.word_keys) sorted along each row ("" as
    NO_WORD, first)."""
    return tf.sort(word_keys(words), axis=1)


def in_rows(words: tf.Tensor, row_words: tf.Tensor) -> tf.Tensor:
    """[B, ...]: each of the words [B, ...] is among its row's `row_words` [B, X]."""
    table = sorted_hashes(row_words)
    flat = tf.reshape(fingerprints(words), [tf.shape(words)[0], -1])
    at = tf.searchsorted(table, flat)
    width = tf.shape(table)[1]
    found = tf.gather(table, tf.minimum(at, tf.maximum(width - 1, 0)), batch_dims=1)
    hit = (at < width) & (found == flat)
    return tf.reshape(hit, tf.shape(words))


class Spelling(tf.Module):
    """The vocabulary's and the log's words, as the judge of a suggestion's words and the
    corrector of a session's.

    Args:
        encoder: the `SessionEncoder` (its vocabulary table and tokens).
        log_words: the query log's word table (LogLookup.word_ids: word -> id, -1 for
            others), or None without a ranking.
        slips: the log's misspellings' corrections (LogLookup.slips: slip -> word, "" for
            others), or None without a ranking.
    """

    def __init__(
        self,
        encoder: SessionEncoder,
        log_words: SavedTable | None = None,
        slips: Corrections | None = None,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.log_words = log_words
        self.slips = slips
        self.judges = log_words is not None or not encoder.tokenise.pieces

    def known(self, words: tf.Tensor) -> tf.Tensor:
        """[...]: the words (any shape) are in the vocabulary (whole) or in the log."""
        found = self.encoder.table.lookup(words) != UNK
        if self.log_words is not None:
            found |= self.log_words.lookup(words) >= 0
        return found | (words == "")

    def all_known(
        self, words: tf.Tensor, session_words: tf.Tensor, history: tf.Tensor, typed: Typed | None
    ) -> tf.Tensor:
        """[B, M]: every word of the candidates (words [B, M, L]) is known: the vocabulary's,
        the log's, the session's (session_words [B, S, n]), the kept history's [B, T] or a
        finished word of what was `typed` (prefix.Typed, or None) that is no slip
        (Spelling.names: a name the log lacks, offered as typed). Where the typed words hold
        such a name, a candidate goes no further than what was typed, its last word
        completed, and the person's own words: no phrase of the model's around a word it
        never saw ("zorblax for sale")."""
        if not self.judges:
            return tf.ones(tf.shape(words)[:2], tf.bool)
        batch = tf.shape(words)[0]
        own = tf.concat(
            [
                tf.reshape(session_words, [batch, -1]),
                tf.strings.split(history).merge_dims(1, 2).to_tensor(""),
            ],
            axis=1,
        )
        if typed is None:
            return tf.reduce_all(self.known(words) | in_rows(words, own), axis=-1)
        count, finished = finished_words(typed.text, typed.open)
        new = self.names(finished, own)
        mine = in_rows(words, tf.concat([own, tf.where(new, finished, "")], axis=1))
        known = tf.reduce_all(self.known(words) | mine, axis=-1)
        beyond = tf.range(tf.shape(words)[2])[None, None, :] >= count[:, None, None]
        phrase = tf.reduce_any(beyond & ~mine & (words != ""), axis=-1)
        return known & ~(tf.reduce_any(new, axis=1)[:, None] & phrase)

    def names(self, words: tf.Tensor, own: tf.Tensor) -> tf.Tensor:
        """[B, W]: the words [B, W] that are names the log lacks, offered as typed: neither
        known nor among their row's `own` words [B, X] (the session's and the history's), of
        typos.LAST_RESORT_CHARS or more letters (nearly every string of two is one edit from
        a word, and no search box forgives it), and with no known or own word one edit from
        them (that makes a slip: "firous " after "fibrous breast")."""
        batch, width = tf.shape(words)[0], tf.shape(words)[1]
        variants = edit_variants(tf.reshape(words, [-1]), whole=True, min_chars=LAST_RESORT_CHARS)
        variants = tf.reshape(variants, [batch, width, -1])
        near = self.known(variants) | in_rows(variants, own)
        near = tf.reduce_any(near & (variants != ""), axis=-1)
        unknown = ~self.known(words) & ~in_rows(words, own)
        return unknown & ~near & (tf.strings.length(words) >= LAST_RESORT_CHARS)

    def corrected(self, queries: tf.Tensor, min_chars: int = MIN_CHARS) -> tf.Tensor:
        """Normalised queries (any shape) -> the same with each of the log's misspellings
        read as its correction (slips.py), and each unknown word of `min_chars` or more
        characters replaced by the most frequent vocabulary word one edit away."""
        if not self.judges or self.encoder.tokenise.pieces:
            return queries
        split = tf.strings.split(tf.reshape(queries, [-1]))
        words = split.flat_values
        if self.slips is not None:
            right = self.slips.lookup(words)
            words = tf.where(right != "", right, words)
        unknown = ~self.known(words) & (tf.strings.length(words) >= min_chars)
        at = tf.where(unknown)
        wrong = tf.gather_nd(words, at)
        ids = self.encoder.table.lookup(edit_variants(wrong, whole=True, min_chars=min_chars))
        none = self.encoder.vocab_size
        best = tf.reduce_min(tf.where(ids >= len(SPECIALS), ids, none), axis=1)
        right = tf.where(
            best < none, tf.gather(self.encoder.tokens, tf.minimum(best, none - 1)), wrong
        )
        fixed = tf.tensor_scatter_nd_update(words, at, right)
        return tf.reshape(joined(split.with_flat_values(fixed).to_tensor("")), tf.shape(queries))
