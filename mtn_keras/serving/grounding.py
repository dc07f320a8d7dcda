"""Grounded generation: the beam writes a word only where people put it, so it
never glues session words into a phrase nobody types ("hotels in cheap", "plumber near
emergency", "powells books in new jersey").

A word may follow the last two when the pair (last, word) and the triple (before last, last,
word) each stand in a query of the log or of the session; a query's start and end count as
words, so a suggestion starts as some query starts and ends as some query ends ("50 chest"
and "in chicago" are never written). A word the log lacks is the person's own: it may stand
where it stands in the session, end a suggestion, and a triple beginning with it needs only
its pair; nothing else stands beside it ("mount rainier new york", "how to start a prk").

The log's pairs and triples are a bit set of their 64-bit codes, five bits each (a Bloom
filter sized to the log, `set_size`: about 1 in 28,000 of the others passes; 2 MiB for the
dev log, 256 MiB at most), small enough for the export and cheap
inside the XLA-compiled search: a step looks up every word of the vocabulary after each
beam's last two at once.

Where the log completes nothing, a second search may go beyond it (beyond_log.py, `loose`
rows): there the first word after the typed ones (the typed unfinished word's completion) may
be any English word of the vocabulary (wordfreq, word_starts.english_words), so that "boston
weat" finds "boston weather" though the log never paired the two; at most one word follows
it, by the log's pairs (only the triple across the junction is not asked for): past that the
model rambles ("rome hotels in new york").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, SPECIALS
from mtn_keras.ranking.log_lookup import fingerprints
from mtn_keras.ranking.tables import saved_array
from mtn_keras.serving.word_starts import english_words

if TYPE_CHECKING:
    from mtn_keras.ranking.log_index import QueryLogIndex

BITS = 2**24  # the fewest bits of the set (2 MiB) ...
BITS_PER_QUERY = 192  # ... and at least this many a query of the log (`set_size`)
MOST_BITS = 2**31  # a bit's position stays an int32
HASHES = 5  # bits per entry
CANDIDATES = 16  # the words a step checks whole after each beam: its likeliest ...
QUICK_HASHES = 3  # ... of those that pass a quick look at the pairs (1 in 650 falsely)
NO_WORD = -1  # the key of "" (padding, a query's start)
IS_WORD = 7  # the partner of every log word in the set: "a log word" is the pair (w, IS_WORD)
START, END = "\x02", "\x03"  # where a query starts and ends, as words of its pairs and triples
CHUNK = 100_000  # queries whose pairs and triples are coded at once (`pair_bits`)


def pair_codes(first: tf.Tensor, second: tf.Tensor) -> tf.Tensor:
    """Int64 keys of two words [...] and [...] -> the pair's code (wrapping arithmetic)."""
    return tf.bitwise.bitwise_xor(first * 1_000_003, second)


def set_size(queries: int) -> int:
    """The bits of the set of a log of `queries` distinct queries: a power of two of at least
    BITS and BITS_PER_QUERY a query. A query brings about 5.4 pairs, triples and words (the
    dev log's), so some 35 bits stand for each, about 13 % of the bits are set and about 1
    in 28,000 of the others pass (0.13 ** HASHES), whatever the log's size; a set of one
    size fills up as the log grows (2 ** 24 bits: 13 % set by the dev log, 39 % by a log
    four times its size, where 1 in 110 passes)."""
    bits = BITS
    while bits < BITS_PER_QUERY * queries and bits < MOST_BITS:
        bits *= 2
    return bits


def bit_positions(codes: tf.Tensor, hashes: int | None = None, bits: int = BITS) -> tf.Tensor:
    """Codes [...] -> the bit positions [..., hashes] of each in a set of `bits` (a power of
    two; double hashing: h1 + i h2)."""
    low = tf.bitwise.bitwise_and(codes, bits - 1)
    step = tf.bitwise.bitwise_or(tf.bitwise.right_shift(codes, bits.bit_length() - 1), 1)
    found = [tf.bitwise.bitwise_and(low + i * step, bits - 1) for i in range(hashes or HASHES)]
    return tf.stack(found, axis=-1)


def word_keys(words: tf.Tensor) -> tf.Tensor:
    """Words (any shape) -> int64 keys; NO_WORD for ""."""
    return tf.where(words == "", tf.constant(NO_WORD, tf.int64), fingerprints(words))


def triple_codes(first: tf.Tensor, second: tf.Tensor, third: tf.Tensor) -> tf.Tensor:
    """Int64 keys of three words -> the triple's code."""
    return pair_codes(pair_codes(first, second) * 31 + 17, third)


def pair_bits(queries: Sequence[str]) -> np.ndarray:
    """The bit set [set_size / 32] int32 of the word pairs and triples of `queries` (distinct),
    and of their words; the queries are read CHUNK at a time (a log's tens of millions of
    pairs and triples never stand as strings at once)."""
    bits = np.zeros(set_size(len(queries)) // 32, np.uint32)
    words: set[str] = set()
    for start in range(0, len(queries), CHUNK):
        _set_bits(bits, _chunk_codes(queries[start : start + CHUNK], words))
    keys = word_keys(tf.constant(sorted(words), tf.string))
    _set_bits(bits, pair_codes(keys, tf.constant(IS_WORD, tf.int64)))
    return bits.view(np.int32)


def _chunk_codes(queries: Sequence[str], words: set[str]) -> tf.Tensor:
    """The codes of the word pairs and triples of `queries`, whose words join `words`."""
    pairs: tuple[list[str], list[str]] = ([], [])
    triples: tuple[list[str], list[str], list[str]] = ([], [], [])
    for query in queries:
        split = query.split()
        words.update(split)
        split = [START, *split, END]
        for column, start in zip(pairs, range(2)):
            column += split[start : len(split) - 1 + start]
        for column, start in zip(triples, range(3)):
            column += split[start : len(split) - 2 + start]

    def keys(column: list[str]) -> tf.Tensor:
        return word_keys(tf.constant(column, tf.string))

    return tf.concat([pair_codes(*map(keys, pairs)), triple_codes(*map(keys, triples))], axis=0)


def _set_bits(bits: np.ndarray, codes: tf.Tensor) -> None:
    """Sets the bits of `codes` in the uint32 words of `bits`."""
    at = bit_positions(codes, bits=32 * len(bits)).numpy().ravel()
    np.bitwise_or.at(bits, at >> 5, np.left_shift(np.uint32(1), (at & 31).astype(np.uint32)))


class PhraseConstraint(tf.Module):
    """The log's word pairs, as a constraint on each step of the beam.

    Args:
        queries: the log's queries (the index's, slips corrected).
        vocab_tokens: the vocabulary, id order.
    """

    def __init__(self, queries: Sequence[str], vocab_tokens: Sequence[str]) -> None:
        super().__init__()
        bits = pair_bits(queries)
        self.bits, self.size = saved_array(bits), 32 * len(bits)
        # <bos> is where a query starts, <eos> where it ends; the other specials no word
        tokens = [START if i == BOS else END if i == EOS else t for i, t in enumerate(vocab_tokens)]
        keys = word_keys(tf.constant(tokens, tf.string))
        special = (tf.range(len(tokens)) < len(SPECIALS)) & ~tf.reduce_any(
            tf.range(len(tokens))[:, None] == [BOS, EOS], axis=1
        )
        self.vocab_keys = saved_array(tf.where(special, tf.constant(NO_WORD, tf.int64), keys))
        self.vocab_size = len(vocab_tokens)
        english = set(english_words())
        # [V]: the vocabulary's English words, all a loose row's beam may add to the log's
        self.english = saved_array(np.array([t in english for t in vocab_tokens]))

    def attested(self, codes: tf.Tensor, hashes: int = HASHES) -> tf.Tensor:
        """Codes (any shape) -> whether their bits (the first `hashes`) are all set."""
        at = tf.cast(bit_positions(codes, hashes, self.size), tf.int32)
        words = tf.gather(self.bits, tf.bitwise.right_shift(at, 5))
        bits = tf.bitwise.right_shift(words, tf.bitwise.bitwise_and(at, 31))
        return tf.reduce_all(tf.bitwise.bitwise_and(bits, 1) == 1, axis=-1)

    def is_log_word(self, keys: tf.Tensor) -> tf.Tensor:
        """Word keys (any shape) -> whether the log holds the word (NO_WORD: no)."""
        return self.attested(pair_codes(keys, tf.constant(IS_WORD, tf.int64))) & (keys != NO_WORD)

    def context(
        self,
        source: tf.Tensor,
        ext: tf.Tensor,
        forced: tf.Tensor | None,
        loose: tf.Tensor | None = None,
    ) -> dict[str, tf.Tensor]:
        """What a step needs of each session (its tokens `source` [B, S, n] and extended ids
        `ext` [B, S, n], front-padded to the model's S slots; the typed tokens to `forced`
        [B, n] or None; the rows whose beam may go beyond the log, `loose` [B] or None: none):
        the keys of its copied words (ext id V + j), each session word's id with the key of
        the word before it, how many steps are forced, and the loose rows."""
        batch = tf.shape(source)[0]
        words = tf.reshape(source, [batch, -1])
        keys = word_keys(words)
        ext = tf.reshape(ext, [batch, -1])
        slot = ext[:, :, None] - self.vocab_size == tf.range(tf.shape(ext)[1])[None, None, :]
        copy_keys = tf.reduce_max(
            tf.where(slot, keys[:, :, None], tf.constant(NO_WORD, tf.int64)), axis=1
        )
        before = tf.pad(source[:, :, :-1], [[0, 0], [0, 0], [1, 0]])
        before_that = tf.pad(source[:, :, :-2], [[0, 0], [0, 0], [2, 0]])
        one, two = (word_keys(tf.reshape(w, [batch, -1])) for w in (before, before_that))
        forced_steps = (
            tf.zeros([batch], tf.int32)
            if forced is None
            else tf.reduce_sum(tf.cast(forced != PAD, tf.int32), axis=1)
        )
        return {
            "copy_keys": copy_keys,
            "session_ids": tf.where(words == "", PAD, ext),
            "session_before": one,
            "session_before_two": tf.where(
                two == NO_WORD, tf.constant(NO_WORD, tf.int64), pair_codes(two, one)
            ),
            "forced_steps": forced_steps,
            **({} if loose is None else {"loose": loose}),
        }

    def constrain(
        self,
        log_probs: tf.Tensor,
        tokens: tf.Tensor,
        before: tf.Tensor,
        context: Mapping[str, tf.Tensor],
        t: tf.Tensor,
    ) -> tf.Tensor:
        """Step t's log-probabilities [N, V_ext] with -inf where the next word (or <eos>)
        would make a pair or a triple no query holds after the beams' last `tokens` [N] and
        the tokens `before` [N] them (<bos> reads as a query's start, <eos> as its end), and
        for every word but each beam's CANDIDATES likeliest (the search keeps far fewer);
        the typed words being forced are left as they are."""
        last = self.keys(tokens[:, None], context["copy_keys"])  # [N, 1]
        likely = tf.where(self.may_follow(last, context, log_probs, t), log_probs, float("-inf"))
        top = tf.math.top_k(likely, min(CANDIDATES, log_probs.shape[1] or CANDIDATES)).indices
        ids = tf.concat([top, tf.fill([tf.shape(top)[0], 1], EOS)], axis=1)  # [N, C + 1]
        keys = self.keys(ids, context["copy_keys"])
        first = self.keys(before[:, None], context["copy_keys"])
        pair = self.attested(pair_codes(last, keys)) | self.in_session(
            ids, context["session_before"] == last, context
        )
        triple = self.attested(triple_codes(first, last, keys)) | self.in_session(
            ids, context["session_before_two"] == pair_codes(first, last), context
        )
        triple |= (first == NO_WORD) | ~self.is_log_word(first)
        # a word the log lacks (<unk>: a typed word the vocabulary lacks too) may end
        own = (tokens != BOS)[:, None] & ~self.is_log_word(last) & (ids == EOS)
        ok = (pair & triple) | own
        if "loose" in context:  # only the search beyond the log pays for it
            ok = self.beyond(ok, pair, ids, context, t)
        # the other specials never pass (the search bans them anyway)
        ok &= (ids >= len(SPECIALS)) | (ids == EOS)
        free = (t < context["forced_steps"])[:, None]
        return tf.where(free | marked(ids, ok, log_probs), log_probs, float("-inf"))

    def may_follow(
        self,
        last: tf.Tensor,
        context: Mapping[str, tf.Tensor],
        log_probs: tf.Tensor,
        t: tf.Tensor,
    ) -> tf.Tensor:
        """[N, V_ext]: a quick look (QUICK_HASHES bits, pairs only) at which words may follow
        the beams' last words (their keys `last` [N, 1]): the words of the session, and
        those the log's pairs may hold, so that the CANDIDATES a step checks are likely
        ones, not the model's likeliest whatever the log says ("50 county" crowded out "50
        cent")."""
        codes = tf.concat(
            [pair_codes(last, self.vocab_keys[None, :]), pair_codes(last, context["copy_keys"])],
            axis=1,
        )
        quick = self.attested(codes, QUICK_HASHES)
        ids = context["session_ids"]
        mine = marked(ids, tf.ones_like(ids, tf.bool), log_probs)
        found = quick | mine | (tf.range(tf.shape(log_probs)[1]) == EOS)[None, :]
        if "loose" in context:
            junction = context["loose"] & (t == context["forced_steps"])
            found |= junction[:, None] & self.is_english(tf.range(tf.shape(log_probs)[1]))
        return found

    def beyond(
        self,
        ok: tf.Tensor,
        pair: tf.Tensor,
        ids: tf.Tensor,
        context: Mapping[str, tf.Tensor],
        t: tf.Tensor,
    ) -> tf.Tensor:
        """`ok` [N, X] for the candidate `ids` [N, X] (their `pair` attested) of a loose row:
        any English word at the junction (the first step after the typed words), the log's
        pairs without the triple across it one step later, and only the end after that (past
        it the model rambles)."""
        forced = context["forced_steps"]
        junction, after = context["loose"] & (t == forced), context["loose"] & (t == forced + 1)
        ok |= junction[:, None] & self.is_english(ids)
        ok |= after[:, None] & pair
        return ok & (~(context["loose"] & (t > forced + 1))[:, None] | (ids == EOS))

    def is_english(self, ids: tf.Tensor) -> tf.Tensor:
        """Extended ids (any shape) -> whether each is an English word of the vocabulary (a
        copied session word is not: it stands by the log's pairs or its place)."""
        found = tf.gather(self.english, tf.minimum(ids, self.vocab_size - 1))
        return found & (ids < self.vocab_size)

    def keys(self, ids: tf.Tensor, copy_keys: tf.Tensor) -> tf.Tensor:
        """Extended ids [N, X] -> their words' keys: the vocabulary's, or the session word
        a copy id stands for (`copy_keys` [N, S*n])."""
        vocab = tf.gather(self.vocab_keys, tf.minimum(ids, self.vocab_size - 1))
        copied = tf.gather(copy_keys, tf.maximum(ids - self.vocab_size, 0), batch_dims=1)
        return tf.where(ids < self.vocab_size, vocab, copied)

    @staticmethod
    def in_session(ids: tf.Tensor, match: tf.Tensor, context: Mapping[str, tf.Tensor]) -> tf.Tensor:
        """[N, X]: the ids [N, X] that are session words at the positions `match` [N, P]
        marks."""
        found = tf.where(match, context["session_ids"], PAD)  # [N, P]
        return tf.reduce_any(ids[:, :, None] == found[:, None, :], axis=-1) & (ids != PAD)


def marked(ids: tf.Tensor, flags: tf.Tensor, like: tf.Tensor) -> tf.Tensor:
    """[N, V_ext] bool shaped as `like`: True at each row's `ids` [N, X] whose `flags` [N, X]
    are True (an id listed twice is True if either is)."""
    rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
    found = tf.scatter_nd(tf.stack([rows, ids], axis=-1), tf.cast(flags, tf.int32), tf.shape(like))
    return found > 0


def slip_ids(vocab_tokens: Sequence[str], index: QueryLogIndex) -> set[int]:
    """The vocabulary ids of the log's misspellings (index.slips): the beam never writes
    one; a person who types it is read through its correction (spelling.py)."""
    return {i for i, word in enumerate(vocab_tokens) if word in index.slips}
