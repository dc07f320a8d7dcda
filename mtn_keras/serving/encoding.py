"""Sessions to the model's ids and ids back to words, inside the graph.

A session's queries are normalised as `prepare` does, the empty ones dropped, the rest
right-aligned and cut to the model's window; their tokens (words, or WordPiece pieces) get
vocabulary ids and extended ids (the j-th distinct out-of-vocabulary token of a session is
V + j, so the copy head can copy it); suggested ids become words again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import tensorflow as tf

from mtn_keras.data.vocab import PAD, UNK
from mtn_keras.ranking.history_lookup import latest
from mtn_keras.ranking.tables import SavedTable, saved_array
from mtn_keras.ranking.words import joined
from mtn_keras.serving.text import MAX_READ_WORD_CHARS, QueryNormaliser, Tokeniser, detokenised


class Encoded(NamedTuple):
    """Sessions as the model reads them: right-aligned `queries` [B, S'], their `words`
    [B, S', n], `source` tokens (the words or their pieces) [B, S', n], token ids `tokens`
    and extended ids `ext` [B, S', n] (int32); with a prefix, its normalised text `typed`
    [B] (else None)."""

    queries: tf.Tensor
    words: tf.Tensor
    source: tf.Tensor
    tokens: tf.Tensor
    ext: tf.Tensor
    typed: tf.Tensor | None = None


class SessionEncoder(tf.Module):
    """The vocabulary and the model's window, as tables and string ops.

    Args:
        vocab_tokens: the vocabulary, id order.
        max_queries: the session's last queries the model reads.
        max_query_tokens: the tokens of a query the model reads (n).
    """

    def __init__(
        self, vocab_tokens: Sequence[str], max_queries: int, max_query_tokens: int
    ) -> None:
        super().__init__()
        self.n, self.max_queries = max_query_tokens, max_queries
        self.vocab_size = len(vocab_tokens)
        self.tokens = saved_array(list(vocab_tokens), tf.string)
        self.table = SavedTable(list(vocab_tokens), tf.range(self.vocab_size), UNK)
        self.normalise = QueryNormaliser(max(MAX_READ_WORD_CHARS, *map(len, vocab_tokens)))
        self.tokenise = Tokeniser(vocab_tokens, self.table)

    def prepare(self, session: tf.Tensor, prefix: tf.Tensor | None = None) -> Encoded:
        """[B, S] strings (and a `prefix` [B], normalised with them) -> `Encoded`."""
        # A leading empty query makes S >= 1 for every input, [B, 0] included.
        empty = tf.fill([tf.shape(session)[0], 1], "")
        columns = [empty, session] if prefix is None else [empty, session, prefix[:, None]]
        queries = self.normalise(tf.concat(columns, axis=1))
        typed = None
        if prefix is not None:
            queries, typed = queries[:, :-1], queries[:, -1]
        real = queries != ""
        # Move the real queries to the end, in order, so the last query is always at S'-1.
        order = tf.argsort(tf.cast(real, tf.int32), axis=1, stable=True)
        queries = tf.gather(queries, order, batch_dims=1)[:, -self.max_queries :]
        split = tf.strings.split(queries)
        words = split.to_tensor("", shape=[None, None, self.n])
        source, ids = self.token_ids(split)
        return Encoded(queries, words, source, ids, self.extend(source, ids), typed)

    def cut(self, texts: tf.Tensor) -> tf.Tensor:
        """Texts (any shape) normalised and cut to the model's n words, as a session's queries
        are read (a user's earlier queries: no entry, however long, slows a call)."""
        words = tf.strings.split(tf.reshape(self.normalise(texts), [-1]))
        return tf.reshape(joined(words.to_tensor("", shape=[None, self.n])), tf.shape(texts))

    def history_ids(self, kept: tf.Tensor, count: int) -> tf.Tensor:
        """The kept history [B, T] -> the token ids [B, count, n] of its latest `count` entries,
        as a model's third level reads them: vocabulary ids and <unk>, as in training (nothing
        is copied from the history)."""
        return self.token_ids(tf.strings.split(latest(kept, count)))[1]

    def token_ids(self, split: tf.RaggedTensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Words, ragged [B, S, (words)] -> their tokens [B, S, n] ("" padding) and the
        tokens' vocabulary ids (<unk> outside it, <pad> for "")."""
        source = self.tokenise.of_words(split).to_tensor("", shape=[None, None, self.n])
        return source, tf.where(source == "", PAD, self.table.lookup(source))

    def extend(self, words: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
        """Extended ids: the j-th distinct out-of-vocabulary token of a session gets V + j."""
        batch = tf.shape(words)[0]
        flat = tf.reshape(words, [batch, -1])
        oov = tf.reshape((ids == UNK) & (words != ""), [batch, -1])
        same = (flat[:, :, None] == flat[:, None, :]) & oov[:, None, :] & oov[:, :, None]
        first = tf.argmax(tf.cast(same, tf.int32), axis=2, output_type=tf.int32)
        is_first = oov & (first == tf.range(tf.shape(flat)[1])[None])
        rank = tf.cumsum(tf.cast(is_first, tf.int32), axis=1) - 1
        ext = tf.where(oov, self.vocab_size + tf.gather(rank, first, batch_dims=1), 0)
        return tf.where(tf.reshape(oov, tf.shape(ids)), tf.reshape(ext, tf.shape(ids)), ids)

    def word_ids(self, words: tf.Tensor, inputs: Encoded) -> tf.Tensor:
        """Tokens [B, X] -> ids: vocabulary ids, a session's copyable token's extended id,
        else <unk>; 0 for ""."""
        ids = tf.where(words == "", PAD, self.table.lookup(words))
        flat_words = tf.reshape(inputs.source, [tf.shape(words)[0], -1])
        flat_ext = tf.reshape(inputs.ext, [tf.shape(words)[0], -1])
        match = words[:, :, None] == flat_words[:, None, :]
        source = tf.gather(flat_ext, tf.argmax(tf.cast(match, tf.int32), axis=2), batch_dims=1)
        copyable = (ids == UNK) & tf.reduce_any(match, axis=2)
        return tf.where(copyable, source, ids)

    def to_words(self, ids: tf.Tensor, inputs: Encoded, typed: tf.Tensor | None) -> tf.Tensor:
        """Ids [B, k, L] -> words [B, k, L]: vocabulary tokens, copied words, typed prefix
        words; under WordPiece, the pieces joined into words."""
        tokens = self.to_tokens(ids, inputs, typed)
        if not self.tokenise.pieces:
            return tokens
        words = tf.strings.split(detokenised(tokens)).to_tensor("")
        return tf.pad(words, [[0, 0], [0, 0], [0, tf.shape(ids)[2] - tf.shape(words)[2]]])

    def to_tokens(self, ids: tf.Tensor, inputs: Encoded, typed: tf.Tensor | None) -> tf.Tensor:
        """Ids [B, k, L] -> tokens: vocabulary tokens, copied words, typed prefix tokens."""
        batch = tf.shape(ids)[0]
        vocab_words = tf.gather(self.tokens, tf.minimum(ids, self.vocab_size - 1))
        flat_ext = tf.reshape(inputs.ext, [batch, 1, 1, -1])
        flat_words = tf.reshape(inputs.source, [batch, -1])
        position = tf.argmax(tf.cast(ids[..., None] == flat_ext, tf.int32), axis=-1)
        copied = tf.gather(flat_words, tf.reshape(position, [batch, -1]), batch_dims=1)
        copied = tf.reshape(copied, tf.shape(ids))
        words = tf.where(ids >= self.vocab_size, copied, vocab_words)
        if typed is not None:
            length = tf.shape(ids)[2]
            typed = tf.pad(typed, [[0, 0], [0, tf.maximum(length - self.n, 0)]])[:, :length]
            typed = tf.broadcast_to(typed[:, None, :], tf.shape(ids))
            words = tf.where((ids == UNK) & (typed != ""), typed, words)
        return tf.where(ids == PAD, "", words)

    @staticmethod
    def known_words(inputs: Encoded) -> tf.Tensor:
        """[B]: the share of the last query's tokens in the vocabulary."""
        last = inputs.source[:, -1] != ""
        known = last & (inputs.tokens[:, -1] != UNK)
        return tf.math.divide_no_nan(
            tf.reduce_sum(tf.cast(known, tf.float32), -1),
            tf.reduce_sum(tf.cast(last, tf.float32), -1),
        )

    @staticmethod
    def knows_session(inputs: Encoded) -> tf.Tensor:
        """[B, 1]: the vocabulary holds a word of the session (the beam's witness for
        suggestions that share no word with it, without a ranking)."""
        tokens = inputs.tokens
        return tf.reduce_any((tokens != PAD) & (tokens != UNK), axis=[1, 2])[:, None]
