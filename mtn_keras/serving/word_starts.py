"""Which typed words are known nowhere, inside the serving graph: the only words a list may
correct (docs/ranking.md, "True to what was typed").

A finished word is known when it is an English word (wordfreq, Zipf ENGLISH_ZIPF or more), a
word of the vocabulary or of the query log, or one of the session's or the history's; the
unfinished last word when it starts one of those. Words shorter than typos.LAST_RESORT_CHARS
are known: nearly every short string starts some word. The English, vocabulary and log words
travel as one sorted int32 array of 30-bit hashes of every start of every word, the low bit
set where the start is the whole word (a stray match only keeps a word as typed).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np
import tensorflow as tf

from mtn_keras.data.text import normalise
from mtn_keras.ranking.tables import saved_array
from mtn_keras.ranking.typos import LAST_RESORT_CHARS
from mtn_keras.serving.prefix import Typed

ENGLISH_ZIPF = 1.5  # wordfreq: about once in 30 million words; 173,000 words and names
HASH_BUCKETS = 2**30


@functools.cache
def english_words(zipf: float = ENGLISH_ZIPF) -> list[str]:
    """wordfreq's English words of `zipf` or more, normalised as queries are (read once a
    process)."""
    import wordfreq

    found = []
    for word in wordfreq.iter_wordlist("en", wordlist="large"):
        if wordfreq.zipf_frequency(word, "en", wordlist="large") < zipf:
            break  # the list runs from the most frequent down
        found += normalise(word).split()
    return found


def start_keys(words: Iterable[str]) -> np.ndarray:
    """Sorted int32 keys of every start of the words: hash * 2, + 1 for a whole word."""
    starts: dict[str, int] = {}
    for word in set(words):
        for end in range(1, len(word)):
            starts.setdefault(word[:end], 0)
        starts[word] = 1
    if not starts:
        return np.zeros([0], np.int32)
    texts = list(starts)
    hashes = tf.strings.to_hash_bucket_fast(texts, HASH_BUCKETS).numpy()
    keys = hashes * 2 + np.array([starts[t] for t in texts])
    return np.unique(keys.astype(np.int32))


@functools.cache
def english_keys() -> np.ndarray:
    """`start_keys` of `english_words` (built once a process: a few seconds)."""
    return start_keys(english_words())


class WordStarts(tf.Module):
    """The known words' starts (`start_keys`) of `words`, and the typed words known nowhere."""

    def __init__(self, words: Iterable[str]) -> None:
        super().__init__()
        keys = np.union1d(english_keys(), start_keys(words))
        self.keys = saved_array(np.append(keys, np.iinfo(np.int32).max).astype(np.int32))

    def listed(self, texts: tf.Tensor, whole: tf.Tensor) -> tf.Tensor:
        """[B, W]: each text [B, W] is a listed word (`whole`) or the start of one."""
        key = tf.cast(tf.strings.to_hash_bucket_fast(texts, HASH_BUCKETS), tf.int32) * 2
        wanted = key + tf.cast(whole, tf.int32)
        at = tf.searchsorted(self.keys, tf.reshape(wanted, [-1]))
        found = tf.reshape(tf.gather(self.keys, at), tf.shape(texts))
        return (found == wanted) | (~whole & (found == key + 1))

    def unknown(self, typed: Typed, own: tf.Tensor) -> tf.Tensor:
        """[B, W]: the typed words (`typed.text` split, "" padding) that are known nowhere:
        neither listed nor among (finished) or the start of (the open last word) the row's
        `own` words [B, X] (the session's and the history's)."""
        words = tf.strings.split(typed.text).to_tensor("")
        count = tf.reduce_sum(tf.cast(words != "", tf.int32), axis=1)
        last = tf.range(tf.shape(words)[1])[None, :] == count[:, None] - 1
        open_word = last & typed.open[:, None]
        known = self.listed(words, ~open_word)
        shape = tf.concat([tf.shape(words), tf.shape(own)[1:]], axis=0)  # [B, W, X]
        theirs = tf.broadcast_to(own[:, None, :], shape)
        size = tf.broadcast_to(tf.strings.length(words)[:, :, None], shape)
        head = tf.strings.substr(theirs, tf.zeros_like(size), size)
        same = tf.where(open_word[:, :, None], head, theirs) == words[:, :, None]
        mine = tf.reduce_any(same & (theirs != ""), axis=-1)
        short = tf.strings.length(words, unit="UTF8_CHAR") < LAST_RESORT_CHARS
        return ~(known | mine | short) & (words != "")

    def span(self, typed: Typed, session_words: tf.Tensor, history: tf.Tensor | None) -> tf.Tensor:
        """int32 [B, 2]: `slip_span` of what was `typed`, after a session of `session_words`
        [B, S, n] with the kept `history` [B, T] (None: none)."""
        batch = tf.shape(session_words)[0]
        own = [tf.reshape(session_words, [batch, -1])]
        if history is not None:
            own.append(tf.strings.split(history).merge_dims(1, 2).to_tensor(""))
        return slip_span(typed, self.unknown(typed, tf.concat(own, axis=1)))


def slip_span(typed: Typed, unknown: tf.Tensor) -> tf.Tensor:
    """int32 [B, 2]: the characters (first, past the last) of the first typed word known
    nowhere (`unknown` [B, W], WordStarts.unknown), where one edit may fall; [-1, -1] when
    every typed word is known."""
    words = tf.pad(tf.strings.split(typed.text).to_tensor(""), [[0, 0], [0, 1]])  # W >= 1
    unknown = tf.pad(unknown, [[0, 0], [0, tf.shape(words)[1] - tf.shape(unknown)[1]]])
    sizes = tf.strings.length(words, unit="UTF8_CHAR") + 1  # a word and the space after it
    starts = tf.cumsum(sizes, axis=1, exclusive=True)
    first = tf.argmax(tf.cast(unknown, tf.int32), axis=1, output_type=tf.int32)
    start = tf.gather(starts, first, batch_dims=1)
    end = start + tf.gather(sizes, first, batch_dims=1) - 1
    found = tf.reduce_any(unknown, axis=1)
    return tf.stack([tf.where(found, start, -1), tf.where(found, end, -1)], axis=1)
