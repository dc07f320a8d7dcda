"""Odd input at the serving graph: normalisation equal to prepare's on any text, and the
SavedModel's answers to any input shape (hypothesis fuzz cases)."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtn_keras.data.text import normalise
from mtn_keras.serving.text import MAX_READ_WORD_CHARS, QueryNormaliser

FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def normaliser():
    return QueryNormaliser()


def expected(text):
    """prepare's normalisation, with words cut as the serving graph cuts them."""
    return " ".join(word[:MAX_READ_WORD_CHARS] for word in normalise(text).split())


def graph(normaliser, texts):
    return [t.decode() for t in normaliser(tf.constant(texts, tf.string)).numpy()]


def test_a_nul_byte_separates_words_in_both(normaliser):
    assert normalise("wea\x00ther") == "wea ther"
    assert graph(normaliser, ["wea\x00ther", "A\x00"]) == ["wea ther", "a"]


@pytest.mark.slow
def test_every_character_maps_as_in_prepare(normaliser):
    texts = [f"A{chr(code)}b" for code in range(0x30000) if not 0xD800 <= code < 0xE000]
    got = graph(normaliser, texts)
    wrong = [(t, g) for t, g in zip(texts, got) if g != expected(t)]
    assert not wrong, wrong[:10]


@pytest.mark.slow
@FUZZ
@given(st.lists(st.text(), min_size=1, max_size=8))
def test_random_unicode_normalises_as_in_prepare(normaliser, texts):
    assert graph(normaliser, texts) == [expected(t) for t in texts]


@FUZZ
@given(st.lists(st.text(), min_size=1, max_size=8))
def test_an_unfinished_last_word_is_seen_as_in_prepare(normaliser, texts):
    # A text ends open when its last character is no separator, which normalise keeps.
    got = normaliser.ends_open(tf.constant(texts, tf.string)).numpy().tolist()
    assert got == [bool(t) and normalise(t[-1]) != "" for t in texts]


def test_long_words_are_cut(normaliser):
    assert graph(normaliser, ["x" * 100_000 + " Y"]) == ["x" * MAX_READ_WORD_CHARS + " y"]


@pytest.fixture(scope="module")
def loaded(exported):
    return tf.saved_model.load(str(exported))


def expect_outputs(out, batch, size, k, n):
    # A session of no queries is one of one empty query; 5: max_queries of the tiny model.
    slots = min(max(size, 1) + 1, 5)
    assert out["suggestions"].shape == (batch, k) and out["scores"].shape == (batch, k)
    assert out["copy_attention"].shape == (batch, k, slots, n)
    assert out["source_tokens"].shape == (batch, slots, n)
    assert out["scores"].dtype == tf.float32


def test_a_batch_of_no_sessions_gets_empty_outputs(loaded, service):
    for size in (0, 3):
        session = tf.zeros([0, size], tf.string)
        expect_outputs(loaded.signatures["suggest"](session=session), 0, size, service.k, service.n)
        out = loaded.signatures["complete"](session=session, prefix=tf.zeros([0], tf.string))
        expect_outputs(out, 0, size, service.k, service.n)
        assert loaded.signatures["session_attention"](session=session)["attention"].shape[0] == 0


def test_an_empty_session_answers_as_one_empty_query(loaded, service):
    """[B, 0] is [[""], ...] to every signature, shapes included: a typed first query
    completes, and with nothing typed the answer is the same nothing."""
    none, one_empty = tf.zeros([2, 0], tf.string), tf.constant([[""], [""]])
    prefix, history = tf.constant(["chea", ""]), tf.constant([["used cars", ""]] * 2)
    calls = [
        (loaded.signatures["suggest"], {}),
        (loaded.signatures["complete"], {"prefix": prefix}),
        (loaded.signatures["session_attention"], {}),
        (service.suggest_with_history, {"history": history}),
        (service.complete_with_history, {"prefix": prefix, "history": history}),
    ]
    for function, inputs in calls:
        got, want = function(session=none, **inputs), function(session=one_empty, **inputs)
        assert set(got) == set(want)
        for key in want:
            np.testing.assert_array_equal(got[key].numpy(), want[key].numpy(), err_msg=key)
    typed = loaded.signatures["complete"](session=none, prefix=prefix)["suggestions"].numpy()
    assert any(text.startswith(b"chea") for text in typed[0])


@pytest.mark.parametrize("shape", [[2], [1, 1, 1], []])
def test_a_session_of_the_wrong_rank_is_named(loaded, shape):
    session = tf.fill(shape, "cheap flights")
    for name, args in [
        ("suggest", {}),
        ("session_attention", {}),
        ("complete", {"prefix": tf.constant(["c"])}),
    ]:
        with pytest.raises(
            tf.errors.InvalidArgumentError, match=r"session must be a string tensor \[B, S\]"
        ):
            loaded.signatures[name](session=session, **args)


def test_a_prefix_batch_unlike_the_session_batch_is_named(loaded):
    complete = loaded.signatures["complete"]
    session = tf.constant([["cheap flights"], ["used cars"]])
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="prefix must hold one row per session"
    ):
        complete(session=session, prefix=tf.constant(["c"]))
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"prefix must be a string tensor \[B\]"
    ):
        complete(session=session, prefix=tf.constant([["c"], ["u"]]))


def test_a_100000_character_prefix_is_cut_like_a_query(service):
    """Cut to MAX_READ_WORD_CHARS, the unfinished word is still no known word: nothing is shown
    rather than its continuation (the `nonwords` filter)."""
    out = service.complete(tf.constant([["cheap flights"]]), tf.constant(["x" * 100_000]))
    texts = out["suggestions"].numpy().astype(str)[0]
    assert texts.shape == (service.k,) and not any(texts)
    typed = service.typed.read(tf.constant(["x" * 100_000])).text.numpy()[0]
    assert typed == b"x" * MAX_READ_WORD_CHARS


# The python service runs the graph of the SavedModel's signatures without XLA, so one trace
# serves every shape (the SavedModel compiles the search once per batch size).
@FUZZ
@given(
    batch=st.integers(0, 3),
    size=st.integers(0, 7),
    cells=st.lists(
        st.sampled_from(["", "cheap flights", "Hotel DEALS!", "zzyzx", "\x00", "é" * 70]),
        min_size=21,
        max_size=21,
    ),
)
def test_any_session_shape_gets_outputs_of_its_shape(service, batch, size, cells):
    session = tf.constant(
        np.array(cells[: batch * size], dtype=object).reshape(batch, size),
        tf.string,
        shape=[batch, size],
    )
    expect_outputs(service.suggest(session), batch, size, service.k, service.n)
    prefix = tf.constant(cells[:batch], tf.string, shape=[batch])
    expect_outputs(service.complete(session, prefix), batch, size, service.k, service.n)


def test_chunks_answer_as_one_call():
    """in_chunks: 7 rows in chunks of 3 (the last padded, its padding dropped), one of 7 rows,
    and no rows, each as one call of `answer` would."""
    from mtn_keras.serving.inputs import in_chunks

    outputs = {"text": (tf.string, ("batch", "slots")), "size": (tf.float32, ("batch",))}

    def answer(session, prefix):
        return {
            "text": session + prefix[:, None],
            "size": tf.cast(tf.strings.length(prefix), tf.float32),
        }

    session = tf.constant([[str(i), "a"] for i in range(7)])
    prefix = tf.constant(["x" * i for i in range(7)])
    whole = answer(session, prefix)
    for chunk in (3, 7, 64):
        got = in_chunks(answer, [session, prefix], outputs, {"slots": 2}, chunk)
        for key in outputs:
            np.testing.assert_array_equal(got[key].numpy(), whole[key].numpy(), err_msg=key)


def test_a_batch_larger_than_a_chunk_answers_as_its_sessions_alone(service):
    from mtn_keras.serving.inputs import CHUNK

    sessions = [["cheap flights"], ["used cars", "used cars online"], ["", "hotel deals"]]
    rows = [sessions[i % 3] if i % 3 else ["", sessions[0][0]] for i in range(CHUNK + 2)]
    out = service.suggest(tf.constant(rows))
    assert out["suggestions"].shape[0] == CHUNK + 2
    for i in (0, 1, 2, CHUNK, CHUNK + 1):
        alone = service.suggest(tf.constant([rows[i]]))
        for key in ("suggestions", "sources", "source_tokens"):
            np.testing.assert_array_equal(out[key].numpy()[i], alone[key].numpy()[0], err_msg=key)
        np.testing.assert_allclose(out["scores"].numpy()[i], alone["scores"].numpy()[0], atol=1e-5)
