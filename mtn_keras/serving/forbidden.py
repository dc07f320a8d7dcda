"""What the serving graph never shows, whatever its settings (data/safety.py, the rule's one
room): the ids the beam never writes, so that lists stay full, and the last check of every
list, wherever its items came from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import tensorflow as tf

from mtn_keras.data import safety
from mtn_keras.data.vocab import BOS, PAD, UNK
from mtn_keras.ranking import filters

if TYPE_CHECKING:
    from mtn_keras.ranking.hybrid import Shown

NEG_INF = float("-inf")


def last_check(shown: Shown, explicit_shown: bool) -> Shown:
    """The `shown` (hybrid.Shown, [B, k] each) less any item the safety rule forbids
    (filters.unsafe), the rest moved up in their order: the graph's last word on every list,
    whatever the settings and wherever an item came from."""
    bad = filters.unsafe(shown.texts, explicit_shown) & (shown.scores > NEG_INF)
    order = tf.argsort(tf.cast(bad, tf.int32), axis=1, stable=True)
    scores = tf.where(bad, NEG_INF, shown.scores)
    return shown._replace(
        scores=tf.gather(scores, order, batch_dims=1),
        texts=tf.gather(tf.where(bad, "", shown.texts), order, batch_dims=1),
        sources=tf.gather(tf.where(bad, "", shown.sources), order, batch_dims=1),
        copied=tf.gather(shown.copied, order, batch_dims=1),
    )


def banned_ids(
    vocab_tokens: Sequence[str], phrases: Iterable[str], pieces: bool, explicit_shown: bool = False
) -> list[int]:
    """The ids the beam never writes: <pad>, <unk>, <bos>, and in a word vocabulary the
    blocked words and the words the safety rule forbids alone (data/safety.py: a term for
    abuse material always, an explicit word unless `explicit_shown`), so that lists stay
    full. Under WordPiece a blocked word's id is also the first piece of innocent words
    ("dick" of "dickens"), so there the filters alone drop them."""
    if pieces:
        return [PAD, UNK, BOS]
    rule = safety.child_unsafe if explicit_shown else safety.explicit
    blocked = set(phrases) | {word for word in vocab_tokens if rule(word)}
    return sorted({PAD, UNK, BOS} | {i for i, word in enumerate(vocab_tokens) if word in blocked})
