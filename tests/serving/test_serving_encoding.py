"""The session encoding's twins agree: the numpy one the models train on
(`data.encode.encode_session`) and the graph's (`SessionEncoder.prepare`, its `extend`),
on random sessions of known, unknown, repeated and odd words (hypothesis), under a word
vocabulary and a WordPiece one (words spelt from pieces in the graph)."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data.encode import encode_session
from mtn_keras.data.text import normalise
from mtn_keras.data.vocab import PAD, SPECIALS, Vocabulary
from mtn_keras.serving.encoding import SessionEncoder

N, MAX_QUERIES = 4, 3
VOCABS = {
    "words": Vocabulary([*SPECIALS, "cheap", "flights", "rome", "hotels"]),
    # "lisbon" and "x" are spelt from pieces; "porto", "crème" and the Greek word are not.
    "pieces": Vocabulary(
        [
            *SPECIALS,
            "cheap",
            "flight",
            "##s",
            "rome",
            "hotel",
            "l",
            "##is",
            "##bo",
            "##b",
            "##on",
            "##o",
            "x",
            "p",
            "##r",
            "c",
            "##è",
            "ς",
            "<unk>x",
        ]
    ),
}
# Known words in any case, unknown ones (some repeated across queries), punctuation, a
# special token's spelling, and non-ASCII words.
WORDS = [
    "cheap",
    "Flights",
    "ROME",
    "hotels",
    "lisbon",
    "porto",
    "Lisbon",
    "x",
    "?!",
    "-",
    "<unk>",
    "crème",
    "ΣΊΣΥΦΟΣ",
    "東京",
]
QUERY = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.text(max_size=12),
)


@pytest.fixture(scope="module", params=list(VOCABS))
def vocab_and_prepare(request):
    """A vocabulary and the graph's encoder for it, traced once for every session shape as
    the signatures run it (no model is built: the encoder reads only the model's sizes)."""
    vocab = VOCABS[request.param]
    encoder = SessionEncoder(vocab.tokens, MAX_QUERIES, N)
    return vocab, tf.function(
        encoder.prepare, input_signature=[tf.TensorSpec([None, None], tf.string)]
    )


def numpy_twin(session, vocab):
    """What `prepare` should make of a raw session, by the training encoder: the session's
    non-empty normalised queries, the last MAX_QUERIES of them, encoded."""
    queries = [q for q in map(normalise, session) if q][-MAX_QUERIES:]
    return encode_session(queries, vocab, N)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(QUERY, max_size=5))
def test_prepare_encodes_a_session_as_encode_session(vocab_and_prepare, session):
    vocab, prepare = vocab_and_prepare
    prepared = prepare(tf.constant([session], tf.string, shape=[1, len(session)]))
    tokens, ext = prepared.tokens.numpy()[0], prepared.ext.numpy()[0]
    encoded = numpy_twin(session, vocab)
    padding = len(tokens) - len(encoded.tokens)  # real queries are right-aligned
    assert padding >= 0 and (tokens[:padding] == PAD).all() and (ext[:padding] == PAD).all()
    np.testing.assert_array_equal(tokens[padding:], encoded.tokens)
    np.testing.assert_array_equal(ext[padding:], encoded.ext)
    source = prepared.source.numpy()[0, padding:]
    oov = [
        w.decode() for w, i in zip(source.ravel(), ext.ravel()[padding * N :]) if i >= len(vocab)
    ]
    assert list(dict.fromkeys(oov)) == encoded.oov
