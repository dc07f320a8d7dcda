"""The log's most frequent next queries ("google", "ebay", "yahoo"), offered after any
session while nothing is typed, each with its share of the log's next queries as its
probability: the top-up of the adj anchor, which finds the next query for most of adj's
hits on users the model never saw (docs/ranking.md). They are chosen among the
ranked suggestions by that probability and shown after them, at most DecodeConfig.popular of
them; one may return to an earlier query of the session ("google", "weather", "google"),
never to the last.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import tensorflow as tf

from mtn_keras.data import safety
from mtn_keras.data.evidence import Evidence
from mtn_keras.ranking import filters
from mtn_keras.ranking.rules import blocks, repeats_a_word

if TYPE_CHECKING:
    from mtn_keras.ranking.log_index import QueryLogIndex
    from mtn_keras.ranking.shown import Shown

NEG_INF = float("-inf")
POOL = 20  # the most frequent next queries looked at for each list
# With a history, a popular query the user never typed follows one of their queries far
# less often than the log's share says (validation users: google 0.31% against 2.1% of
# pairs without history, ebay and yahoo under a tenth of it); 0.25 kept the new pairs'
# hits best on the curve in docs/ranking.md.
WITH_HISTORY = 0.25


def most_followed(index: QueryLogIndex, top: int) -> tuple[list[str], np.ndarray]:
    """The `top` queries of a `QueryLogIndex` that most often followed another in its log,
    most first, with their shares of all (query, next query) pairs."""
    size = len(index.queries)
    seconds = (index.follow_keys % max(size, 1)).astype(np.int64)
    counts = np.bincount(seconds, weights=index.follow_counts, minlength=size)
    order = np.argsort(-counts, kind="stable")[:top]
    order = order[counts[order] > 0]
    return [index.queries[i] for i in order], counts[order] / max(counts.sum(), 1.0)


class Offered(NamedTuple):
    """The popular queries of a batch: `scores` [B, P] (-inf: not offered) and `texts`
    [B, P]."""

    scores: tf.Tensor
    texts: tf.Tensor


class PopularQueries:
    """The log's POOL most frequent next queries that pass the filters of the text alone
    (blocked, repeats) as constants, and which of them each session may be offered.

    Args:
        index: the `QueryLogIndex`.
        cap: at most this many shown in a list (DecodeConfig.popular; 0: none).
        threshold: the ranker's threshold without a history: a share below it is not shown.
        phrases: the blocked phrases (none when the filter is off).
        enabled: the filters on; `session` keeps the last query's words off the list.
        explicit_shown: sexually explicit queries may be offered (never child-unsafe ones);
            when not, nor those the log's evidence calls explicit (the index's
            `explicit_queries` and `site_names`).
    """

    def __init__(
        self,
        index: QueryLogIndex,
        cap: int,
        threshold: float,
        phrases: Collection[str],
        enabled: Collection[str],
        explicit_shown: bool = False,
    ) -> None:
        texts, shares = most_followed(index, len(index.queries) if cap else 0)
        unsafe = safety.child_unsafe if explicit_shown else safety.explicit
        logged = Evidence(
            dict.fromkeys(index.explicit_queries, "clicks"), frozenset(index.site_names)
        )
        fine = [
            i
            for i, text in enumerate(texts)
            if not ("repeats" in enabled and repeats_a_word(text))
            and not ("blocked" in enabled and blocks(text, phrases))
            and not unsafe(text)
            and (explicit_shown or not logged.marks(text))
        ][:POOL]
        # Plain Python, made constants of the graph where it is traced: tensors, or a
        # tf.Module, would be saved with the variables and change them with every setting.
        self.texts = [texts[i] for i in fine]
        self.shares = shares[fine].astype(np.float32)
        self.width = max([len(text.split()) for text in self.texts] + [1])
        self.words = [(text.split() + [""] * self.width)[: self.width] for text in self.texts]
        self.cap, self.threshold = int(cap), float(threshold)
        self.session = "session" in enabled

    def offered(self, last_words: tf.Tensor, history: tf.Tensor, typed: tf.Tensor) -> Offered:
        """`Offered` after the sessions' last queries (their words [B, 1, n]), with the kept
        `history` [B, T] and `typed` [B] (none while words are typed): each query's share,
        times WITH_HISTORY where the row has a history; none the user typed before (the
        history offers those itself), none whose words all lie in the last query."""
        batch, size = tf.shape(history)[0], len(self.texts)
        texts = tf.tile(tf.constant(self.texts, tf.string, [1, size]), [batch, 1])
        has_history = tf.reduce_any(history != "", axis=1)
        shares = tf.constant(self.shares, tf.float32, [1, size])
        scores = shares * tf.where(has_history, WITH_HISTORY, 1.0)[:, None]
        before = tf.reduce_any(texts[:, :, None] == history[:, None, :], axis=-1)
        off = before | typed[:, None] | (scores < self.threshold)
        if self.session:
            words = tf.constant(self.words, tf.string, [1, size, self.width])
            off |= filters.inside_a_query(tf.tile(words, [batch, 1, 1]), last_words)
        return Offered(tf.where(off, NEG_INF, scores), texts)


def appended(shown: Shown, offered: Offered, cap: int) -> tuple[Shown, tf.Tensor]:
    """The ranked candidates `shown` (shown.Shown of the whole table, [B, M] each: -inf
    scores not shown) with the `offered` popular queries after them: none a shown candidate
    already is, at most `cap` per row, the most frequent first, nothing copied. Returns them
    as one `Shown` of [B, M + P] and a [B, M + P] mask of the popular ones."""
    scores, texts, sources, copied = shown
    seen = (offered.texts[:, :, None] == texts[:, None, :]) & (scores > NEG_INF)[:, None, :]
    ok = (offered.scores > NEG_INF) & ~tf.reduce_any(seen, axis=-1)
    ok &= tf.cumsum(tf.cast(ok, tf.int32), axis=1, exclusive=True) < cap  # shares descend
    popular_sources = tf.fill(tf.shape(offered.texts), "popular")
    copy_shape = tf.concat([tf.shape(offered.texts), tf.shape(copied)[2:]], 0)
    grown = shown._replace(
        scores=tf.concat([scores, tf.where(ok, offered.scores, NEG_INF)], axis=1),
        texts=tf.concat([texts, offered.texts], axis=1),
        sources=tf.concat([sources, popular_sources], axis=1),
        copied=tf.concat([copied, tf.zeros(copy_shape, copied.dtype)], axis=1),
    )
    popular = tf.concat([tf.zeros_like(scores, tf.bool), tf.ones_like(ok)], axis=1)
    return grown, popular
