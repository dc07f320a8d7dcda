"""The beam search's named steps, each on hand-made tensors (one batch row, V = 6)."""

import numpy as np
import tensorflow as tf

from mtn_keras.data.vocab import BOS, EOS, PAD, UNK
from mtn_keras.decoding.beam_search import Beams, BeamSearch, Finished

A, B = 4, 5
INF = np.inf


def searcher(**kwargs):
    """A BeamSearch of one row, 2 beams, 2 results, length 4, no length normalisation."""
    options = dict(
        batch_size=1, beam_size=2, num_results=2, max_length=4, length_alpha=0.0, exact_stop=True
    )
    return BeamSearch(None, **{**options, **kwargs})


def beams(seqs, log_probs, tokens=None, state=None):
    seqs = tf.constant([seqs], tf.int32)
    tokens = seqs[0, :, 0] if tokens is None else tf.constant(tokens, tf.int32)
    return Beams(tokens, state or {}, seqs, tf.constant([log_probs], tf.float32))


def uniform(rows):
    return tf.fill([rows, 6], float(np.log(1 / 6)))


def test_initialize_starts_one_live_beam_on_bos_and_an_empty_pool():
    search = searcher(trace=lambda state: state["copied"])
    alive, pool = search.initialize({"copied": tf.ones([1, 3])})
    assert alive.tokens.numpy().tolist() == [BOS, BOS]
    assert alive.log_probs.numpy().tolist() == [[0.0, -INF]]
    assert alive.state["copied"].shape == (2, 3) and alive.seqs.shape == (1, 2, 4)
    assert np.isneginf(pool.scores.numpy()).all() and pool.traces.shape == (1, 2, 3)


def test_block_banned_leaves_only_words():
    blocked = searcher().block_banned(uniform(2)).numpy()
    assert np.isneginf(blocked[:, [PAD, UNK, BOS, EOS]]).all()
    assert np.isfinite(blocked[:, [A, B]]).all()


def test_block_repeats_stops_a_bigram_and_a_word_twice_in_a_row():
    alive = beams([[A, B, 0, 0], [B, 0, 0, 0]], [0.0, 0.0], tokens=[A, B])
    # Step 2 of "a b" fed a: "a b" again and "a a" are blocked; "b" fed b: "b b" is.
    blocked = searcher().block_repeats(uniform(2), alive, 2).numpy()
    assert np.isneginf(blocked[0, [A, B]]).all() and np.isneginf(blocked[1, B])
    assert np.isfinite(blocked[1, A])
    words = searcher(no_repeat_words=True).block_repeats(uniform(2), alive, 2).numpy()
    assert np.isneginf(words[0, [A, B]]).all() and np.isfinite(words[1, A])


def test_force_prefix_keeps_only_the_forced_token_even_a_banned_one():
    search = searcher(prefix=tf.constant([[UNK]]))
    log_probs = tf.math.log(tf.constant([[0.1, 0.2, 0.1, 0.2, 0.3, 0.1]] * 2))
    extend = search.block_banned(log_probs)
    forced, eos = search.force_prefix(log_probs, extend, log_probs[:, EOS], 0)
    np.testing.assert_allclose(forced.numpy()[:, UNK], np.log(0.2), rtol=1e-6)
    assert np.isneginf(np.delete(forced.numpy(), UNK, axis=1)).all() and np.isneginf(eos).all()
    # Past the prefix nothing is forced.
    after, eos = search.force_prefix(log_probs, extend, log_probs[:, EOS], 1)
    np.testing.assert_array_equal(after.numpy(), extend.numpy())
    np.testing.assert_allclose(eos.numpy(), np.log([0.2, 0.2]), rtol=1e-6)


def test_add_finished_keeps_the_best_and_collapses_reorderings():
    pool = Finished(
        tf.constant([[[A, 0, 0, 0], [0, 0, 0, 0]]]),
        tf.constant([[-1.0, -INF]]),
        tf.constant([[-1.0, -INF]]),
        tf.zeros([1, 2, 0]),
    )
    alive = beams([[A, B, 0, 0], [B, A, 0, 0]], [-0.5, -0.6])
    # Both end with eos at log-prob -0.1: "a b" (-0.6) and "b a" (-0.7, the same words).
    added = searcher().add_finished(pool, alive, tf.constant([-0.1, -0.1]), None, 2)
    assert added.seqs.numpy()[0, :, :2].tolist() == [[A, B], [A, 0]]
    np.testing.assert_allclose(added.scores.numpy(), [[-0.6, -1.0]], rtol=1e-6)
    kept = searcher(dedupe=False, num_results=3).add_finished(
        pool._replace(
            seqs=tf.pad(pool.seqs, [[0, 0], [0, 1], [0, 0]]),
            scores=tf.pad(pool.scores, [[0, 0], [0, 1]], constant_values=-INF),
            log_probs=tf.pad(pool.log_probs, [[0, 0], [0, 1]], constant_values=-INF),
            traces=tf.zeros([1, 3, 0]),
        ),
        alive,
        tf.constant([-0.1, -0.1]),
        None,
        2,
    )
    assert kept.seqs.numpy()[0, :, :2].tolist() == [[A, B], [B, A], [A, 0]]


def test_add_finished_carries_each_hypothesis_trace():
    search = searcher(trace=lambda state: state)
    pool = Finished(
        tf.zeros([1, 2, 4], tf.int32),
        tf.fill([1, 2], -INF),
        tf.fill([1, 2], -INF),
        tf.zeros([1, 2, 1]),
    )
    alive = beams([[A, 0, 0, 0], [B, 0, 0, 0]], [-0.5, -0.2])
    added = search.add_finished(
        pool, alive, tf.constant([-0.1, -0.1]), tf.constant([[[7.0], [9.0]]]), 1
    )
    assert added.seqs.numpy()[0, :, 0].tolist() == [B, A]
    assert added.traces.numpy()[0, :, 0].tolist() == [9.0, 7.0]


def test_extend_alive_takes_the_best_extensions_and_reorders_the_state():
    alive = beams([[A, 0, 0, 0], [B, 0, 0, 0]], [-1.0, -0.1], state={"row": tf.constant([10, 20])})
    extend = tf.constant([[-INF] * 4 + [-0.5, -0.7], [-INF] * 4 + [-2.0, -0.3]])
    # Totals: "a a" -1.5, "a b" -1.7, "b a" -2.1, "b b" -0.4.
    new = searcher().extend_alive(alive, extend, 1)
    assert new.seqs.numpy()[0, :, :2].tolist() == [[B, B], [A, A]]
    assert new.tokens.numpy().tolist() == [B, A]
    np.testing.assert_allclose(new.log_probs.numpy(), [[-0.4, -1.5]], rtol=1e-6)
    assert new.state["row"].numpy().tolist() == [20, 10]


def test_should_stop_once_no_alive_beam_can_beat_a_full_pool():
    search = searcher()
    assert not search.should_stop(tf.constant([[-1.0, -2.0]]), tf.constant([[-0.5, -INF]]), 1)
    assert search.should_stop(tf.constant([[-1.0, -2.0]]), tf.constant([[-0.5, -0.9]]), 1)
    assert not search.should_stop(tf.constant([[-0.8, -2.0]]), tf.constant([[-0.5, -0.9]]), 1)
    assert search.should_stop(tf.constant([[-INF, -INF]]), tf.constant([[-0.5, -INF]]), 1)
    # With length normalisation a longer ending may still win: exact_stop waits for it.
    exact, usual = searcher(length_alpha=1.0), searcher(length_alpha=1.0, exact_stop=False)
    # "-0.8" ends at best at length 2: -0.8 / (7/6) < -0.6; at length 4: -0.8 / 1.5 > -0.6.
    alive, pool = tf.constant([[-0.8, -INF]]), tf.constant([[-0.5, -0.6]])
    assert usual.should_stop(alive, pool, 0) and not exact.should_stop(alive, pool, 0)


def test_finalize_pads_what_was_not_found():
    pool = Finished(
        tf.constant([[[A, B, 0, 0], [B, 0, 0, 0]]]),
        tf.constant([[-0.5, -INF]]),
        tf.constant([[-0.7, -0.9]]),
        tf.zeros([1, 2, 0]),
    )
    result = searcher().finalize(pool)
    assert result["ids"].numpy()[0].tolist() == [[A, B, 0, 0], [PAD] * 4]
    assert result["lengths"].numpy().tolist() == [[2, 0]]
    assert result["log_probs"].numpy()[0, 0] == np.float32(-0.7) and np.isneginf(
        result["log_probs"][0, 1]
    )
    assert "trace" not in result
