"""The log's completions of a typed prefix inside the serving graph (prefix_index.py's
arrays as tables; core TensorFlow ops only, kept in the SavedModel's variables), and the
ranker's features of a candidate among them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

from mtn_keras.ranking.tables import SavedTable, saved_array
from mtn_keras.ranking.typos import LAST_RESORT_CHARS, edit_variants

if TYPE_CHECKING:
    from mtn_keras.ranking.log_index import QueryLogIndex

PREFIX_FEATURES = ("prefix_chars", "prefix_rank", "prefix_share")


def completes(texts: tf.Tensor, typed: tf.Tensor) -> tf.Tensor:
    """[B, M]: which normalised texts [B, M] complete the row's `typed` prefix [B]
    (normalised, a trailing space when its last word is finished; "" completes everything):
    data.text.completes, the one completion rule, as graph ops."""
    size = tf.broadcast_to(tf.strings.length(typed)[:, None], tf.shape(texts))
    return tf.strings.substr(texts + " ", tf.zeros_like(size), size) == typed[:, None]


class PrefixLookup(tf.Module):
    """A `QueryLogIndex`'s prefix keys, rows and character order as tables.

    Args:
        index: the `QueryLogIndex`.
        queries: its query texts [Q + 1] (the last one ""), shared with `LogLookup`.
        counts: its query counts [Q], shared with `LogLookup`.
    """

    def __init__(self, index: QueryLogIndex, queries: tf.Variable, counts: tf.Variable) -> None:
        super().__init__()
        self.size = len(index.queries)
        self.queries, self.counts = queries, counts
        self.top = index.prefix_rows.shape[1]
        self.chars = max(map(len, index.prefixes), default=1)
        # One empty row past the end: the answer to a prefix that is no key.
        self.missing = len(index.prefix_rows)
        empty = np.full((1, self.top), -1, np.int32)
        self.rows = saved_array(np.concatenate([index.prefix_rows, empty]))
        self.codes = SavedTable(index.prefixes, index.prefix_codes, self.missing)
        self.order = saved_array(np.concatenate([index.prefix_order, empty[0]]))

    def completions(self, typed: tf.Tensor) -> tf.Tensor:
        """Typed prefixes [B] (normalised; a finished last word followed by a space) -> the
        ids [B, top] of the log's most frequent queries that start with them, most frequent
        first (-1 pads; none for "")."""
        batch = tf.shape(typed)[0]
        sizes = tf.range(1, self.chars + 1)
        shape = [batch, self.chars]
        heads = tf.strings.substr(
            tf.broadcast_to(typed[:, None], shape),
            tf.zeros(shape, tf.int32),
            tf.broadcast_to(sizes[None, :], shape),
            unit="UTF8_CHAR",
        )
        length = tf.strings.length(typed, unit="UTF8_CHAR")
        codes = self.codes.lookup(heads)
        found = (codes != self.missing) & (sizes[None, :] <= length[:, None])
        longest = tf.argmax(tf.where(found, sizes[None, :], 0), axis=1, output_type=tf.int32)
        code = tf.where(
            tf.reduce_any(found, axis=1), tf.gather(codes, longest, batch_dims=1), self.missing
        )
        listed = tf.gather(self.rows, tf.maximum(code, 0))
        run = tf.gather(
            self.order, tf.maximum(-code - 1, 0)[:, None] + tf.range(self.top, dtype=tf.int64)[None]
        )
        ids = tf.cast(tf.where((code >= 0)[:, None], listed, run), tf.int64)
        keep = completes(self.texts(ids), typed) & (ids >= 0) & (typed != "")[:, None]
        top, _ = tf.math.top_k(tf.where(keep, -ids, -tf.cast(self.size, tf.int64)), self.top)
        return tf.where(top > -self.size, -top, -1)

    def near_completions(self, typed: tf.Tensor, forgive: tf.Tensor) -> tf.Tensor:
        """Typed prefixes [B] -> the ids [B, top] of the log's most frequent queries that
        start one edit from what was typed (typos.edit_variants) and do not complete it as
        typed, most frequent first (-1 pads; none where no slip is forgiven: `forgive` [B])."""
        batch = tf.shape(typed)[0]
        typed_forgiven = tf.where(forgive, typed, "")
        variants = edit_variants(typed_forgiven, min_chars=LAST_RESORT_CHARS)
        found = self.completions(tf.reshape(variants, [-1]))
        ids = tf.reshape(found, [batch, -1])
        past = tf.constant(self.size, tf.int64)  # sorts after every query id
        ids = tf.where(completes(self.texts(ids), typed) | (ids < 0), past, ids)
        ids = tf.sort(ids, axis=1)  # most frequent first: ids go by falling count
        repeated = tf.pad(ids[:, 1:] == ids[:, :-1], [[0, 0], [1, 0]])
        ids = tf.sort(tf.where(repeated, past, ids), axis=1)
        ids = tf.pad(ids, [[0, 0], [0, self.top]], constant_values=past)[:, : self.top]
        return tf.where(ids < past, ids, -1)

    def total(self, ids: tf.Tensor) -> tf.Tensor:
        """[B]: how often the log's queries `ids` [B, N] (-1: none) were typed, together."""
        return tf.reduce_sum(tf.where(ids >= 0, tf.gather(self.counts, tf.maximum(ids, 0)), 0.0), 1)

    def texts(self, ids: tf.Tensor) -> tf.Tensor:
        """The query texts of ids (any shape; "" for -1)."""
        return tf.gather(self.queries, tf.where(ids >= 0, ids, self.size))

    def features(self, candidates: tf.Tensor, ids: tf.Tensor, typed: tf.Tensor) -> tf.Tensor:
        """float32 [B, M, 3]: `PREFIX_FEATURES` of candidate texts [B, M] after the typed
        prefixes [B] whose completions are `ids` [B, top]: the prefix's length in characters,
        1 / the candidate's rank among the completions and its share of their counts (0 when
        it is none of them)."""
        same = candidates[:, :, None] == self.texts(ids)[:, None, :]
        same &= (ids >= 0)[:, None, :]
        rank = 1.0 / tf.range(1.0, self.top + 1.0)
        counts = tf.where(ids >= 0, tf.gather(self.counts, tf.maximum(ids, 0)), 0.0)
        share = tf.math.divide_no_nan(counts, tf.reduce_sum(counts, axis=1, keepdims=True))
        pick = tf.cast(same, tf.float32)
        chars = tf.cast(tf.strings.length(typed, unit="UTF8_CHAR"), tf.float32)
        return tf.stack(
            [
                tf.broadcast_to(chars[:, None], tf.shape(candidates)),
                tf.reduce_sum(pick * rank[None, None, :], axis=-1),
                tf.reduce_sum(pick * share[:, None, :], axis=-1),
            ],
            axis=-1,
        )
