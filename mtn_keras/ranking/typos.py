"""Typo tolerance inside the serving graph (core TensorFlow string ops): the strings one edit
from what was typed, and which texts start within one edit of it.

The bounds follow the search boxes people use (Meilisearch, Elasticsearch's `fuzziness:
AUTO`): one slip is forgiven from MIN_CHARS typed characters on, and the first character is
never taken for a slip. In fewer characters a slip is forgiven only as a last resort, from
LAST_RESORT_CHARS on, where nothing in the log completes what was typed as typed: a short
navigational query typed whole with a slip ("yaoo", "imcb") otherwise finds nothing. One
edit is a character dropped, two neighbours swapped, one replaced or one inserted (the
Damerau-Levenshtein distance 1), and it falls only inside a typed word known nowhere
(serving/word_starts.py): a word that is merely rare in the log is still the person's word.
"""

import tensorflow as tf

from mtn_keras.data.text import SLIP_ALPHABET

MIN_CHARS = 5  # the fewest typed characters in which one slip is forgiven
LAST_RESORT_CHARS = 3  # ... where nothing completes what was typed as typed
MAX_CHARS = 16  # the edits of a typed prefix stay within its first characters (prefix keys')
FIXED_WEIGHT = 0.1  # a corrected candidate's probability is weighed by this (channel model)


def edit_variants(
    texts: tf.Tensor, whole: bool = False, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS
) -> tf.Tensor:
    """[B] -> [B, V]: the strings one edit from each text at characters 1 to `max_chars`
    (the first one kept), "" where an edit does not apply or the text is shorter than
    `min_chars`. In a typed prefix the last character is being typed: it is neither dropped
    nor replaced (a free last character would let any word through), and nothing is added
    after it (what is not typed yet completes it); a `whole` word takes every edit."""
    length = tf.strings.length(texts)
    last = tf.minimum(tf.reduce_max(tf.concat([length, [0]], 0)), max_chars)
    at = tf.range(1, tf.maximum(last + (1 if whole else 0), 1))[None, :]  # [1, P]
    shape = [tf.shape(texts)[0], tf.shape(at)[1]]
    text = tf.broadcast_to(texts[:, None], shape)
    size = tf.broadcast_to(length[:, None], shape)

    def piece(start: tf.Tensor, count: int | None = None) -> tf.Tensor:
        """The characters of each text from `start` [1, P] (clamped), `count` of them."""
        start = tf.minimum(tf.broadcast_to(start, shape), size)
        return tf.strings.substr(text, start, size if count is None else tf.fill(shape, count))

    head = tf.strings.substr(text, tf.zeros(shape, tf.int32), tf.broadcast_to(at, shape))
    here, following, after = piece(at, 1), piece(at + 1, 1), piece(at + 1)
    long_enough = size >= min_chars
    inside = long_enough & ((at < size) if whole else (at < size - 1))
    swaps = long_enough & (at + 1 < size) & (here != following)
    grow = long_enough & ((at <= size) if whole else (at < size))
    alphabet = tf.constant(list(SLIP_ALPHABET))[None, None, :]
    parts = [
        tf.where(inside, head + after, ""),
        tf.where(swaps, head + following + here + piece(at + 2), ""),
        tf.where(
            inside[:, :, None] & (alphabet != here[:, :, None]),
            head[:, :, None] + alphabet + after[:, :, None],
            "",
        ),
        tf.where(grow[:, :, None], head[:, :, None] + alphabet + piece(at)[:, :, None], ""),
    ]
    return tf.concat([tf.reshape(part, [shape[0], -1]) for part in parts], axis=1)


def char_codes(texts: tf.Tensor, width: int | tf.Tensor, pad: int) -> tf.Tensor:
    """Texts (any shape) -> their first `width` Unicode code points, int32 [..., width],
    `pad` past their end."""
    flat = tf.strings.unicode_decode(tf.reshape(texts, [-1]), "UTF-8", errors="replace")
    dense = flat.to_tensor(pad)[:, :width]
    dense = tf.pad(dense, [[0, 0], [0, width - tf.shape(dense)[1]]], constant_values=pad)
    return tf.reshape(dense, tf.concat([tf.shape(texts), [width]], axis=0))


def forgiving(typed: tf.Tensor, found_as_typed: tf.Tensor) -> tf.Tensor:
    """[B]: the typed prefixes [B] in which one slip is forgiven: those of MIN_CHARS or more
    characters, and those of LAST_RESORT_CHARS or more where nothing was `found_as_typed` [B]."""
    length = tf.strings.length(typed, unit="UTF8_CHAR")
    return (length >= MIN_CHARS) | ((length >= LAST_RESORT_CHARS) & ~found_as_typed)


def near_prefix(
    texts: tf.Tensor,
    typed: tf.Tensor,
    forgive: tf.Tensor | None = None,
    span: tf.Tensor | None = None,
) -> tf.Tensor:
    """[B, M]: the texts [B, M] (normalised) that start within one edit of the row's `typed`
    prefix [B] (normalised, a finished last word followed by a space) without completing it
    as typed, the first character the same, the last typed one neither dropped nor replaced
    (as edit_variants); only in the rows where a slip is forgiven (`forgive` [B], by default
    those of MIN_CHARS or more characters) and, given a `span` [B, 2] (word_starts.slip_span:
    the characters of the typed word known nowhere), with the edit inside it. A text is
    matched followed by a space, as `completes` matches."""
    length = tf.strings.length(typed, unit="UTF8_CHAR")
    width = tf.reduce_max(tf.concat([length, [0]], 0)) + 2
    a = char_codes(typed, width, -1)[:, None, :]  # [B, 1, W]
    b = char_codes(texts + " ", width + 1, -2)  # [B, M, W + 1]
    j = tf.range(width)[None, None, :]
    within = j < length[:, None, None]
    differ = (a != b[:, :, :-1]) & within
    count = tf.reduce_sum(tf.cast(differ, tf.int32), axis=-1)
    same_start = tf.math.cumprod(tf.cast(~differ, tf.int32), axis=-1)
    first = tf.reduce_sum(same_start, axis=-1)[:, :, None]  # the first differing position
    a_next = tf.pad(a[:, :, 1:], [[0, 0], [0, 0], [0, 1]], constant_values=-1)
    b_here, b_next = b[:, :, :-1], b[:, :, 1:]
    swapped = differ & tf.pad(differ[:, :, 1:], [[0, 0], [0, 0], [0, 1]])
    swapped &= (a == b_next) & (a_next == b_here)
    before_last = first[:, :, 0] < length[:, None] - 1
    substituted = (count == 1) & before_last
    transposed = (count == 2) & tf.reduce_any(swapped, axis=-1)
    tail = (j >= first) & within
    # A dropped letter: typed has one too many from the first difference on. Dropping the
    # last typed one is no slip, unless it repeats the one before (the same string).
    repeats_last = tf.gather(a[:, 0], tf.maximum(length - 1, 0), batch_dims=1) == tf.gather(
        a[:, 0], tf.maximum(length - 2, 0), batch_dims=1
    )
    dropped = ~tf.reduce_any(tail & (j < length[:, None, None] - 1) & (a_next != b_here), -1)
    dropped &= before_last | (repeats_last & (length >= 3))[:, None]
    inserted = ~tf.reduce_any(tail & (a != b_next), axis=-1)
    near = (substituted | transposed | dropped | inserted) & (count > 0)
    near &= (a[:, :, 0] == b[:, :, 0]) & (first[:, :, 0] > 0)
    if span is not None:
        near &= (first[:, :, 0] >= span[:, :1]) & (first[:, :, 0] <= span[:, 1:])
    forgive = length >= MIN_CHARS if forgive is None else forgive
    return near & forgive[:, None] & (texts != "")
