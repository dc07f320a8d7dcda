"""The query-log index inside the serving graph: lookup tables and core TensorFlow ops only,
so that the SavedModel carries it, in its variables (tables.py). Offers candidates for a
session (what followed its queries in the log, the log's queries on its words; never
globally popular queries) and scores the log's evidence for any candidate, whether the
index or the beam proposed it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

from mtn_keras.ranking.tables import SavedTable, saved_array

if TYPE_CHECKING:
    from mtn_keras.ranking.log_index import QueryLogIndex

EVIDENCE = (
    "follow_last",
    "follow_share",
    "follow_earlier",
    "later_session",
    "neighbour",
    "popularity",
)


def fingerprints(texts: tf.Tensor) -> tf.Tensor:
    """Strings (any shape) -> their 64-bit fingerprints (int64, non-negative): a table keyed
    by them holds 8 bytes a key, not the string."""
    return tf.strings.to_hash_bucket_fast(texts, 2**62)


class Corrections(tf.Module):
    """A table of words -> their corrections (a string table keyed by strings, as one of
    ids and an array: TensorFlow has no string -> string hash table)."""

    def __init__(self, corrections: Mapping[str, str]) -> None:
        super().__init__()
        wrong = tf.constant(list(corrections), tf.string)
        self.ids = SavedTable(wrong, tf.range(len(corrections), dtype=tf.int32), -1)
        self.right = saved_array(list(corrections.values()) + [""], tf.string)  # "" last

    def lookup(self, words: tf.Tensor) -> tf.Tensor:
        """The corrections of `words` (any shape); "" for words that need none."""
        ids = self.ids.lookup(words)
        return tf.gather(self.right, tf.where(ids < 0, tf.shape(self.right)[0] - 1, ids))


class LogLookup(tf.Module):
    """A `QueryLogIndex` as tables.

    Args:
        index: the `QueryLogIndex`.
        candidates: at most this many index candidates per session.
        earlier: neighbours taken from each earlier query of the session (the last query
            offers all of its own).
        rare_words: the last query's rarest known words, whose frequent queries are
            candidates and whose follow counts are the `neighbour` evidence of a candidate
            (with three, a common word's queries came in: "used bows" after "used honda civic").
    """

    def __init__(
        self, index: QueryLogIndex, candidates: int = 24, earlier: int = 3, rare_words: int = 2
    ) -> None:
        super().__init__()
        self.size = len(index.queries)
        self.num_candidates, self.earlier, self.rare_words = candidates, earlier, rare_words
        self.queries = saved_array(index.queries + [""], tf.string)
        # Keyed by the queries' 64-bit fingerprints, not the strings (the export would hold
        # every query twice); int32 ids in the tables, int64 once looked up (pair keys).
        self.query_ids = SavedTable(
            fingerprints(tf.constant(index.queries, tf.string)),
            tf.range(self.size, dtype=tf.int32),
            -1,
        )
        self.counts = saved_array(index.counts)
        self.follow_totals = saved_array(index.follow_totals)
        self.follow = SavedTable(index.follow_keys, index.follow_counts, 0.0)
        self.later = SavedTable(index.later_keys, index.later_counts, 0.0)
        shared = index.shared_keys
        self.shared_pairs = SavedTable(shared, np.ones(len(shared), np.float32), 0.0)
        # Rows of neighbours and of each word's queries as padded matrices (-1 pads), one
        # empty row past the end for unknown queries and words: a row is one gather.
        self.neighbour_rows = CsrRows(index.neighbour_splits, index.neighbours)
        self.word_ids = SavedTable(index.words, tf.range(len(index.words), dtype=tf.int32), -1)
        self.word_idf = saved_array(index.word_idf)
        self.word_rows = saved_array(padded_rows(index.word_splits, index.word_queries))
        # The log's misspellings and their corrections (slips.py): "amercia" -> "america".
        self.slips = Corrections(index.slips)

    def ids(self, queries: tf.Tensor) -> tf.Tensor:
        """Query ids of strings (any shape); -1 for queries the log never saw."""
        return tf.cast(self.query_ids.lookup(fingerprints(queries)), tf.int64)

    def candidates(self, queries: tf.Tensor, rare: tf.Tensor | None = None) -> tf.Tensor:
        """Session queries [B, S] (normalised, right-aligned, "" padding) -> the index's
        candidates [B, C] ("" padding): the last query's neighbours, then the log's most
        frequent queries holding one of its rarest words (what people searched about the
        same thing, worded by people: most of the last queries of new users are not in the
        log), then the earlier queries' neighbours (latest first). The followers of those
        kin queries proved to be mostly popular sites ("google", "myspace"), so they only
        lend evidence."""
        ids = self.ids(queries)
        batch = tf.shape(ids)[0]
        last = self.neighbour_rows(ids[:, -1])
        rare = self.rare_word_ids(queries) if rare is None else rare
        kin = tf.reshape(self._rows(self.word_rows, rare), [batch, -1])
        earlier = self.neighbour_rows(tf.reverse(ids[:, :-1], [1]))[:, :, : self.earlier]
        offered = tf.concat([last, kin, tf.reshape(earlier, [batch, -1])], axis=1)
        return tf.gather(self.queries, self._first_distinct(offered))

    def evidence(
        self, queries: tf.Tensor, candidates: tf.Tensor, rare: tf.Tensor | None = None
    ) -> tf.Tensor:
        """What the log says of each candidate [B, C] after the session [B, S]: a float32
        [B, C, len(EVIDENCE)] of counts (log1p-squashed) and shares."""
        ids, cand = self.ids(queries), self.ids(candidates)
        follow = self._pair_counts(self.follow, ids, cand)  # [B, S, C]
        later = self._pair_counts(self.later, ids, cand)
        follow_last = follow[:, -1]
        total = tf.gather(self.follow_totals, tf.maximum(ids[:, -1:], 0))
        rare = self.rare_word_ids(queries) if rare is None else rare
        idf = tf.gather(self.word_idf, tf.maximum(rare, 0))
        kin_ids = self._rows(self.word_rows, rare)  # [B, R, P]
        kin_follow = self._pair_counts(
            self.follow, tf.reshape(kin_ids, [tf.shape(kin_ids)[0], -1]), cand
        )
        kin_follow = tf.reshape(kin_follow, tf.concat([tf.shape(kin_ids), tf.shape(cand)[1:]], 0))
        neighbour = tf.reduce_sum(kin_follow * idf[:, :, None, None], axis=[1, 2])
        popularity = tf.where(cand >= 0, tf.gather(self.counts, tf.maximum(cand, 0)), 0.0)
        return tf.stack(
            [
                tf.math.log1p(follow_last),
                tf.math.divide_no_nan(follow_last, total),
                tf.math.log1p(tf.reduce_sum(follow[:, :-1], axis=1)),
                tf.math.log1p(tf.reduce_sum(later, axis=1)),
                tf.math.log1p(neighbour),
                tf.math.log1p(popularity),
            ],
            axis=-1,
        )

    def witnessed(self, queries: tf.Tensor, candidates: tf.Tensor) -> tf.Tensor:
        """[B, C]: each candidate [B, C] came after a query of the session [B, S] in the
        sessions of more than one person of the log (QueryLogIndex.shared_keys)."""
        pairs = self._pair_counts(self.shared_pairs, self.ids(queries), self.ids(candidates))
        return tf.reduce_any(pairs > 0, axis=1)

    def rare_word_ids(self, queries: tf.Tensor) -> tf.Tensor:
        """Ids [B, R] of the last query's `rare_words` known words of highest idf (-1 pads);
        `candidates` and `evidence` take them as `rare` when the caller has them already."""
        words = tf.strings.split(queries[:, -1]).to_tensor("")
        pad = [[0, 0], [0, self.rare_words]]
        ids = tf.pad(tf.cast(self.word_ids.lookup(words), tf.int64), pad, constant_values=-1)
        idf = tf.where(ids >= 0, tf.gather(self.word_idf, tf.maximum(ids, 0)), -1.0)
        top, at = tf.math.top_k(idf, self.rare_words)
        return tf.where(top >= 0, tf.gather(ids, at, batch_dims=1), -1)

    @staticmethod
    def _rows(rows: tf.Tensor, ids: tf.Tensor) -> tf.Tensor:
        """Rows [..., P] (int64) of a padded matrix for ids of any shape (-1: the empty last
        row)."""
        found = tf.gather(rows, tf.where(ids >= 0, ids, tf.cast(tf.shape(rows)[0] - 1, ids.dtype)))
        return tf.cast(found, tf.int64)

    def _first_distinct(self, offered: tf.Tensor) -> tf.Tensor:
        """Ids [B, M] (-1 pads) -> [B, C]: each id once per row, first offer first; the
        index of the padding query "" where fewer than C."""
        width = tf.shape(offered)[1]
        position = tf.range(width)
        same = offered[:, :, None] == offered[:, None, :]
        seen = tf.reduce_any(same & (position[None, :] < position[:, None])[None], axis=-1)
        order = tf.where((offered >= 0) & ~seen, -position[None, :], -width)  # first offers highest
        padded = tf.pad(order, [[0, 0], [0, self.num_candidates]], constant_values=-width)
        padded_ids = tf.pad(offered, [[0, 0], [0, self.num_candidates]], constant_values=-1)
        top, at = tf.math.top_k(padded, self.num_candidates)
        picked = tf.gather(padded_ids, at, batch_dims=1)
        return tf.where(top > -width, picked, self.size)

    def _pair_counts(self, table: SavedTable, first: tf.Tensor, second: tf.Tensor) -> tf.Tensor:
        """Counts [B, S, C] of the pairs (first [B, S], second [B, C]); 0 for unknowns."""
        keys = first[:, :, None] * self.size + second[:, None, :]
        known = (first[:, :, None] >= 0) & (second[:, None, :] >= 0)
        return tf.where(known, table.lookup(keys), 0.0)


class CsrRows(tf.Module):
    """Rows of ids of unequal lengths (CSR: row splits [R + 1], values), read as a padded
    matrix: a query's neighbours are 1.4 on average and 10 at most, so the padded matrix
    held seven times the bytes in the export."""

    def __init__(self, splits: np.ndarray, values: np.ndarray) -> None:
        super().__init__()
        self.splits = saved_array(np.append(splits, splits[-1]).astype(np.int32))  # + empty
        self.values = saved_array(np.append(values, -1).astype(np.int32))
        self.width = max(int(np.diff(splits).max(initial=0)), 1)

    def __call__(self, ids: tf.Tensor) -> tf.Tensor:
        """Rows [..., width] (int64, -1 padding) for ids of any shape (-1: an empty row)."""
        flat = tf.reshape(tf.cast(ids, tf.int32), [-1])
        flat = tf.where(flat >= 0, flat, tf.shape(self.splits)[0] - 2)
        start = tf.gather(self.splits, flat)
        length = tf.gather(self.splits, flat + 1) - start
        at = tf.range(self.width)[None, :]
        last = tf.shape(self.values)[0] - 1
        found = tf.gather(self.values, tf.minimum(start[:, None] + at, last))
        found = tf.where(at < length[:, None], found, -1)
        shape = tf.concat([tf.shape(ids), [self.width]], axis=0)
        return tf.cast(tf.reshape(found, shape), tf.int64)


def padded_rows(splits: np.ndarray, values: np.ndarray) -> np.ndarray:
    """CSR rows (splits [R + 1], values) -> an int32 matrix [R + 1, longest row] padded
    with -1, its last row empty (for unknown ids)."""
    lengths = np.diff(splits)
    rows = np.full((len(lengths) + 1, max(int(lengths.max(initial=0)), 1)), -1, np.int32)
    for row, (start, length) in enumerate(zip(splits[:-1], lengths)):
        rows[row, :length] = values[start : start + length]
    return rows
