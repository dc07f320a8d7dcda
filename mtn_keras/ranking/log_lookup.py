"""The query-log index inside the serving graph: lookup tables and core TensorFlow ops only,
so that the SavedModel carries it. Offers candidates for a session (what followed its
queries in the log, the log's queries on its words; never globally popular queries) and
scores the log's evidence for any candidate, whether the index or the beam proposed it."""

import tensorflow as tf

EVIDENCE = ("follow_last", "follow_share", "follow_earlier", "later_session", "neighbour", "popularity")


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

    def __init__(self, index, candidates=24, earlier=3, rare_words=2):
        super().__init__()
        self.size = len(index.queries)
        self.num_candidates, self.earlier, self.rare_words = candidates, earlier, rare_words
        self.queries = tf.constant(index.queries + [""])
        self.query_ids = _table(self.queries[:-1], tf.range(self.size, dtype=tf.int64), -1)
        self.counts = tf.constant(index.counts)
        self.follow_totals = tf.constant(index.follow_totals)
        self.follow = _table(index.follow_keys, index.follow_counts, 0.0)
        self.later = _table(index.later_keys, index.later_counts, 0.0)
        # One empty row past the end stands for unknown queries and words.
        self.neighbour_splits = tf.constant(list(index.neighbour_splits) + [index.neighbour_splits[-1]])
        self.neighbours = tf.constant(index.neighbours, tf.int64)
        self.word_ids = _table(tf.constant(index.words), tf.range(len(index.words), dtype=tf.int64), -1)
        self.word_idf = tf.constant(index.word_idf)
        self.word_splits = tf.constant(list(index.word_splits) + [index.word_splits[-1]])
        self.word_queries = tf.constant(index.word_queries, tf.int64)

    def ids(self, queries):
        """Query ids of strings (any shape); -1 for queries the log never saw."""
        return self.query_ids.lookup(queries)

    def candidates(self, queries):
        """Session queries [B, S] (normalised, right-aligned, "" padding) -> the index's
        candidates [B, C] ("" padding): the last query's neighbours, then the log's most
        frequent queries holding one of its rarest words (what people searched about the
        same thing, worded by people: most of the last queries of new users are not in the
        log), then the earlier queries' neighbours (latest first). The followers of those
        kin queries proved to be mostly popular sites ("google", "myspace"), so they only
        lend evidence."""
        ids = self.ids(queries)
        last = self._rows(self.neighbour_splits, self.neighbours, ids[:, -1])
        kin = self._rows(self.word_splits, self.word_queries, self.rare_word_ids(queries))
        earlier = self._rows(self.neighbour_splits, self.neighbours, tf.reverse(ids[:, :-1], [1]))
        offered = tf.concat([last, kin.merge_dims(1, 2), earlier[:, :, : self.earlier].merge_dims(1, 2)], axis=1)
        return tf.gather(self.queries, self._first_distinct(offered))

    def evidence(self, queries, candidates):
        """What the log says of each candidate [B, C] after the session [B, S]: a float32
        [B, C, len(EVIDENCE)] of counts (log1p-squashed) and shares."""
        ids, cand = self.ids(queries), self.ids(candidates)
        follow = self._pair_counts(self.follow, ids, cand)  # [B, S, C]
        later = self._pair_counts(self.later, ids, cand)
        follow_last = follow[:, -1]
        total = tf.gather(self.follow_totals, tf.maximum(ids[:, -1:], 0))
        rare = self.rare_word_ids(queries)
        kin = self._rows(self.word_splits, self.word_queries, rare)
        idf = tf.gather(self.word_idf, tf.maximum(rare, 0))
        kin_ids = kin.to_tensor(-1)  # [B, R, P]
        kin_follow = self._pair_counts(self.follow, tf.reshape(kin_ids, [tf.shape(kin_ids)[0], -1]), cand)
        kin_follow = tf.reshape(kin_follow, tf.concat([tf.shape(kin_ids), tf.shape(cand)[1:]], 0))
        neighbour = tf.reduce_sum(kin_follow * idf[:, :, None, None], axis=[1, 2])
        popularity = tf.where(cand >= 0, tf.gather(self.counts, tf.maximum(cand, 0)), 0.0)
        return tf.stack([
            tf.math.log1p(follow_last),
            tf.math.divide_no_nan(follow_last, total),
            tf.math.log1p(tf.reduce_sum(follow[:, :-1], axis=1)),
            tf.math.log1p(tf.reduce_sum(later, axis=1)),
            tf.math.log1p(neighbour),
            tf.math.log1p(popularity),
        ], axis=-1)

    def rare_word_ids(self, queries):
        """Ids [B, R] of the last query's `rare_words` known words of highest idf (-1 pads)."""
        words = tf.strings.split(queries[:, -1]).to_tensor("")
        pad = [[0, 0], [0, self.rare_words]]
        ids = tf.pad(self.word_ids.lookup(words), pad, constant_values=-1)
        idf = tf.where(ids >= 0, tf.gather(self.word_idf, tf.maximum(ids, 0)), -1.0)
        top, at = tf.math.top_k(idf, self.rare_words)
        return tf.where(top >= 0, tf.gather(ids, at, batch_dims=1), -1)

    def _rows(self, splits, values, ids):
        """Rows of a CSR table for ids of any shape, dense or ragged (-1: the empty row):
        ids [B, ...] -> ragged [B, ..., (row)]."""
        if isinstance(ids, tf.RaggedTensor):
            return ids.with_flat_values(self._rows(splits, values, ids.flat_values))
        ids = tf.where(ids >= 0, ids, tf.cast(tf.shape(splits)[0] - 2, tf.int64))
        starts = tf.gather(splits, tf.reshape(ids, [-1]))
        limits = tf.gather(splits, tf.reshape(ids, [-1]) + 1)
        rows = tf.RaggedTensor.from_row_lengths(
            tf.gather(values, tf.ragged.range(starts, limits).flat_values), limits - starts
        )
        shape = tf.shape(ids, rows.row_splits.dtype)
        for axis in reversed(range(1, ids.shape.rank)):  # nrows given, for dimensions of size 0
            rows = tf.RaggedTensor.from_uniform_row_length(rows, shape[axis], nrows=tf.reduce_prod(shape[:axis]))
        return rows

    def _first_distinct(self, offered):
        """Ragged ids [B, (M)] -> [B, C]: each id once per row, first offer first; the
        index of the padding query "" where fewer than C."""
        rows = tf.cast(offered.value_rowids(), tf.int64)
        keys, _ = tf.unique(rows * self.size + offered.flat_values)
        distinct = tf.RaggedTensor.from_value_rowids(
            keys % self.size, keys // self.size, nrows=tf.cast(offered.nrows(), tf.int64)
        )
        return distinct.to_tensor(self.size, shape=[None, self.num_candidates])

    def _pair_counts(self, table, first, second):
        """Counts [B, S, C] of the pairs (first [B, S], second [B, C]); 0 for unknowns."""
        keys = first[:, :, None] * self.size + second[:, None, :]
        known = (first[:, :, None] >= 0) & (second[:, None, :] >= 0)
        return tf.where(known, table.lookup(keys), 0.0)


def _table(keys, values, default):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), default)
