"""What the serving graph never shows, whatever its settings (data/safety.py, the rule's one
room): the ids the beam never writes, so that lists stay full, and the last check of every
list, wherever its items came from; and unless explicit items are asked for, what the log's
evidence calls explicit (data/evidence.py): queries whose clicks reached adult sites, and
any query naming an adult site; and always those of them that seek minors, kept as keyed
hashes only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.data import safety
from mtn_keras.data.keyed_hash import BUCKETS, KEY, keyed_hash
from mtn_keras.data.vocab import BOS, PAD, UNK
from mtn_keras.ranking import filters
from mtn_keras.ranking.tables import SavedTable

if TYPE_CHECKING:
    from mtn_keras.ranking.shown import Shown

NEG_INF = float("-inf")


QUERY, SITE, CHILD = 1, 2, 3  # a key of LoggedExplicit: an explicit query, a site, seeks minors


class LoggedExplicit(tf.Module):
    """The queries and the site names that the log's evidence calls explicit (the index's
    `explicit_queries` and `site_names`), and the keyed hashes of those that seek minors
    (`child_keys`), in one table keyed by keyed hashes (data/keyed_hash.py)."""

    def __init__(
        self, queries: Sequence[str], sites: Sequence[str], child_keys: Sequence[int] = ()
    ) -> None:
        super().__init__()
        named = set(sites)
        texts = list(dict.fromkeys([*sites, *queries]))  # a site's name alone is a query too
        keys = [keyed_hash(text) for text in texts] + list(child_keys)
        kinds = [SITE if text in named else QUERY for text in texts] + [CHILD] * len(child_keys)
        self.table = SavedTable(
            tf.constant(keys or [0], tf.int64), tf.constant(kinds or [0], tf.int32), 0
        )

    def _kinds(self, texts: tf.Tensor) -> tf.Tensor:
        return self.table.lookup(tf.strings.to_hash_bucket_strong(texts, BUCKETS, list(KEY)))

    def marks(self, texts: tf.Tensor) -> tf.Tensor:
        """[...]: the normalised text is an explicit query of the log, or holds a word that
        names an adult site."""
        whole = self._kinds(texts)
        words = tf.strings.split(tf.reshape(texts, [-1]))  # [N, (words)]: one ragged axis
        named = tf.ragged.map_flat_values(self._kinds, words)
        named = tf.reshape(tf.reduce_any(named == SITE, axis=-1), tf.shape(texts))
        return (whole == QUERY) | (whole == CHILD) | named

    def seeks_minors(self, texts: tf.Tensor) -> tf.Tensor:
        """[...]: the normalised text is one the log's evidence says seeks minors."""
        return self._kinds(texts) == CHILD


def forbidden(
    texts: tf.Tensor, explicit_shown: bool, logged: LoggedExplicit | None = None
) -> tf.Tensor:
    """[...]: the safety rule forbids the normalised text (filters.unsafe), or `logged`, the
    log's evidence, says it seeks minors, or calls it explicit and explicit items are not
    shown."""
    found = filters.unsafe(texts, explicit_shown)
    if logged is not None:
        found |= logged.seeks_minors(texts) if explicit_shown else logged.marks(texts)
    return found


def last_check(shown: Shown, explicit_shown: bool, logged: LoggedExplicit | None = None) -> Shown:
    """The `shown` (shown.Shown, [B, k] each) less any item the safety rule or the log's
    evidence forbids (`forbidden`), the rest moved up in their order: the graph's last word on
    every list, whatever the settings and wherever an item came from."""
    bad = forbidden(shown.texts, explicit_shown, logged) & (shown.scores > NEG_INF)
    order = tf.argsort(tf.cast(bad, tf.int32), axis=1, stable=True)
    scores = tf.where(bad, NEG_INF, shown.scores)
    return shown._replace(
        scores=tf.gather(scores, order, batch_dims=1),
        texts=tf.gather(tf.where(bad, "", shown.texts), order, batch_dims=1),
        sources=tf.gather(tf.where(bad, "", shown.sources), order, batch_dims=1),
        copied=tf.gather(shown.copied, order, batch_dims=1),
    )


def banned_ids(
    vocab_tokens: Sequence[str],
    phrases: Iterable[str],
    pieces: bool,
    explicit_shown: bool = False,
    sites: Iterable[str] = (),
) -> list[int]:
    """The ids the beam never writes: <pad>, <unk>, <bos>, and in a word vocabulary the
    blocked words and the words the safety rule forbids alone (data/safety.py: a term for
    abuse material always, an explicit word unless `explicit_shown`), and unless
    `explicit_shown` the names of adult `sites`, so that lists stay full. Under WordPiece a
    blocked word's id is also the first piece of innocent words ("dick" of "dickens"), so
    there the filters alone drop them."""
    if pieces:
        return [PAD, UNK, BOS]
    rule = safety.child_unsafe if explicit_shown else safety.explicit
    blocked = set(phrases) | {word for word in vocab_tokens if rule(word)}
    blocked |= set() if explicit_shown else set(sites)
    return sorted({PAD, UNK, BOS} | {i for i, word in enumerate(vocab_tokens) if word in blocked})
