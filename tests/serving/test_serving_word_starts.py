"""Which typed words are known nowhere (mtn_keras/serving/word_starts.py): an English word,
a log word, the session's or the start of one is the person's own; only a word known nowhere
gives a span where one slip may be read."""

import tensorflow as tf

from mtn_keras.serving.prefix import Typed
from mtn_keras.serving.word_starts import WordStarts, slip_span

TYPED = ["holyo", "weahter", "zorblax boston", "boston weahter ", "fabte", "qz", "rome", ""]


def read(texts):
    return Typed(
        tf.strings.strip(tf.constant(texts)),
        tf.constant([bool(t) and not t.endswith(" ") for t in texts]),
        tf.constant([bool(t.strip()) for t in texts]),
    )


def test_only_a_word_known_nowhere_gives_a_span():
    starts = WordStarts(["fabtech"])  # a log word
    own = tf.constant([[""]] * 7 + [["rome"]])
    typed = read(TYPED)
    unknown = starts.unknown(typed, own)
    span = slip_span(typed, unknown).numpy().tolist()
    # "holyo" starts Holyoke; "fabte" a log word; "qz" is too short to judge
    assert span == [[-1, -1], [0, 7], [0, 7], [7, 14], [-1, -1], [-1, -1], [-1, -1], [-1, -1]]


def test_the_session_and_the_history_are_the_persons_own_words():
    starts = WordStarts([])
    own = tf.constant([["zorblax", "gadgets"], ["", ""]])
    typed = read(["zorbl", "zorbl"])
    assert starts.unknown(typed, own).numpy().tolist() == [[False], [True]]
