"""Beam search wide enough to be exact agrees with exhaustive search, state and batch included."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_reference import (
    assert_same,
    decoded,
    exhaustive,
    history_step,
    markov_log_probs,
    markov_step,
    random_tables,
)

from mtn_keras.decoding import beam_search
from mtn_keras.decoding.beam_search import reorder

# With 4 word ids and at most 3 words, 64 beams hold every alive hypothesis: search is exact.
EXACT = dict(beam_size=64, max_length=4, exact_stop=True)
# The searches traced and saved: 3 results of a beam of 4, up to 5 tokens.
SMALL = dict(beam_size=4, num_results=3, max_length=5, length_alpha=0.6, exact_stop=True)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
@pytest.mark.parametrize("dedupe", [True, False])
def test_random_chains_match_exhaustive_search(alpha, dedupe):
    table = random_tables(1, seed=int(alpha * 10) + dedupe)[0]
    result = beam_search(
        markov_step(table),
        {},
        batch_size=1,
        num_results=10,
        length_alpha=alpha,
        dedupe=dedupe,
        **EXACT,
    )
    expected = exhaustive(
        markov_log_probs(table),
        vocab_size=8,
        max_length=4,
        num_results=10,
        alpha=alpha,
        dedupe=dedupe,
    )
    assert_same(decoded(result), expected)


def test_state_is_reordered_with_the_beams():
    step, start, log_probs = history_step(random_tables(3, seed=7).reshape(1, 3, 8, 8), 4)
    result = beam_search(step, start([0]), batch_size=1, num_results=8, length_alpha=0.6, **EXACT)
    expected = exhaustive(lambda seq: log_probs(seq, 0), vocab_size=8, max_length=4, num_results=8)
    assert_same(decoded(result), expected)


def test_trace_sums_the_steps_that_chose_each_result():
    # Each step adds the one-hot of the token it was fed: a result's trace must count <bos>
    # and its tokens but the last (fed at the step that chose <eos>), whatever the reordering.
    step, start, _ = history_step(random_tables(6, seed=3).reshape(2, 3, 8, 8), 4)

    def traced_step(tokens, state, t):
        log_probs, inner = step(tokens, state["inner"], t)
        return log_probs, {"inner": inner, "fed": state["fed"] + tf.one_hot(tokens, 8)}

    state = {"inner": start([0, 1]), "fed": tf.zeros([2, 8])}
    result = beam_search(
        traced_step,
        state,
        batch_size=2,
        num_results=6,
        trace=lambda s: s["fed"],
        length_alpha=0.6,
        **EXACT,
    )
    for row in range(2):
        for seq, length, trace in zip(
            result["ids"][row].numpy(), result["lengths"][row].numpy(), result["trace"][row].numpy()
        ):
            expected = np.bincount([2, *seq[: length - 1]], minlength=8)
            np.testing.assert_allclose(trace, expected)


def test_reorder_leaves_the_context_alone():
    context = {"memory": tf.constant([[1.0], [2.0], [3.0]])}
    state = {"cache": tf.constant([10, 20, 30]), "context": context, "inner": {"context": context}}
    out = reorder(state, tf.constant([2, 2, 0]))
    assert out["cache"].numpy().tolist() == [30, 30, 10]
    assert out["context"] is context and out["inner"]["context"] is context


def test_batch_rows_with_different_states_and_prefixes():
    step, start, log_probs = history_step(random_tables(9, seed=11).reshape(3, 3, 8, 8), 4)
    prefixes = [(4, 5), (), (6,)]
    prefix = tf.constant([[4, 5], [0, 0], [6, 0]])
    result = beam_search(
        step,
        start([2, 0, 1]),
        batch_size=3,
        num_results=5,
        prefix=prefix,
        length_alpha=0.6,
        **EXACT,
    )
    for row, (table, row_prefix) in enumerate(zip([2, 0, 1], prefixes)):
        expected = exhaustive(
            lambda seq: log_probs(seq, table),
            vocab_size=8,
            max_length=4,
            num_results=5,
            prefix=row_prefix,
        )
        assert_same(decoded(result, row), expected)


@pytest.mark.slow
@pytest.mark.parametrize("jit_compile", [False, True])
def test_traced_with_dynamic_batch_prefix_and_vocabulary(jit_compile):
    """Inside a tf.function with unknown batch, prefix length and V_ext (as V + S*n)."""
    tables = tf.constant(random_tables(2, seed=13))

    def step(tokens, state, t):
        rows = tf.gather(tf.gather(tables, state["table"]), tokens, batch_dims=1)
        extra = tf.fill([tf.shape(tokens)[0], tf.shape(state["source"])[1]], -np.inf)
        return tf.concat([rows, extra], axis=1), state

    def decode(table, source, prefix):
        state = {"table": table, "source": source}
        return beam_search(step, state, batch_size=tf.shape(table)[0], prefix=prefix, **SMALL)

    spec = [
        tf.TensorSpec([None], tf.int32),
        tf.TensorSpec([None, None], tf.int32),
        tf.TensorSpec([None, None], tf.int32),
    ]
    traced = tf.function(decode, input_signature=spec, jit_compile=jit_compile)
    args = (tf.constant([0, 1]), tf.zeros([2, 6], tf.int32), tf.constant([[5], [0]]))
    eager, graph = decode(*args), traced(*args)
    for key in ("ids", "lengths", "scores", "log_probs"):
        np.testing.assert_allclose(graph[key].numpy(), eager[key].numpy(), rtol=1e-6)
    assert (eager["ids"].numpy()[0, :, 0] == 5).all()
    assert np.isfinite(eager["scores"].numpy()).all()


@pytest.mark.slow
def test_saved_model_round_trip(tmp_path):
    """A SavedModel holding the search reloads and gives the same suggestions."""
    module = tf.Module()
    module.table = tf.Variable(random_tables(1, seed=17)[0])

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def suggest(prefix):
        def step(tokens, state, t):
            return tf.gather(module.table, tokens), state

        return beam_search(step, {}, batch_size=tf.shape(prefix)[0], prefix=prefix, **SMALL)

    module.suggest = suggest
    tf.saved_model.save(module, str(tmp_path))
    prefix = tf.constant([[4], [0]])
    loaded = tf.saved_model.load(str(tmp_path))
    reloaded = loaded.suggest(prefix)
    for key, value in suggest(prefix).items():
        np.testing.assert_array_equal(reloaded[key].numpy(), value.numpy())
