"""Beam search on hand-made Markov chains whose best sequences are known."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_reference import (
    EOS,
    assert_same,
    chain,
    decoded,
    exhaustive,
    markov_log_probs,
    markov_step,
    random_tables,
)

from mtn_keras.data.vocab import BOS, PAD, UNK
from mtn_keras.decoding import beam_search

A, B, C, D = 4, 5, 6, 7


def search(table, **kwargs):
    """Beam search of one row over a Markov chain table, with test defaults."""
    options = dict(
        batch_size=1, beam_size=5, num_results=5, max_length=5, length_alpha=0.0, exact_stop=True
    )
    options.update(kwargs)
    return beam_search(markov_step(table), {}, **options)


def a_or_b_then(to_c, rest, **kwargs):
    """The chain whose first token is `a` (then the end) or `b`, alike likely; `b` goes on to
    `c` with probability `to_c` (else UNK), and `c` to each of `rest` in turn, then the end."""
    table = {BOS: {A: 0.5, B: 0.5}, A: {EOS: 1.0}, B: {C: to_c, UNK: 1 - to_c}}
    for token, following in zip((C, *rest), (*rest, EOS)):
        table[token] = {following: 1.0}
    return chain(table, **kwargs)


def test_nbest_in_ranking_order():
    table = chain(
        {
            BOS: {A: 0.5, B: 0.3, C: 0.2},
            A: {EOS: 0.7, D: 0.3},
            B: {EOS: 0.9, D: 0.1},
            C: {EOS: 1.0},
            D: {EOS: 1.0},
        }
    )
    found = decoded(search(table))
    expected = [((A,), 0.35), ((B,), 0.27), ((C,), 0.2), ((A, D), 0.15), ((B, D), 0.03)]
    assert [seq for seq, _, _ in found] == [seq for seq, _ in expected]
    np.testing.assert_allclose(
        [lp for _, lp, _ in found], np.log([p for _, p in expected]), rtol=1e-5
    )


def test_finished_hypothesis_keeps_its_score_while_others_continue():
    # With 2 beams, "a" ends at step 1 but must not take a beam: "a c" and "a c d" still come.
    table = chain(
        {
            BOS: {A: 0.6, B: 0.4},
            A: {EOS: 0.9, C: 0.1},
            B: {C: 1.0},
            C: {EOS: 0.6, D: 0.4},
            D: {EOS: 1.0},
        }
    )
    found = decoded(search(table, beam_size=2, length_alpha=0.6))
    expected = exhaustive(markov_log_probs(table), vocab_size=8, max_length=5, num_results=5)
    assert [seq for seq, _, _ in expected] == [(A,), (B, C), (B, C, D), (A, C), (A, C, D)]
    assert_same(found, expected)
    assert found[0][2] == pytest.approx(np.log(0.54) / (7 / 6) ** 0.6, rel=1e-6)


def test_length_normalisation_changes_the_ranking():
    table = a_or_b_then(0.9, (D,))
    raw = decoded(search(table, length_alpha=0.0))
    normalised = decoded(search(table, length_alpha=1.0))
    assert [seq for seq, _, _ in raw] == [(A,), (B, C, D)]
    assert [seq for seq, _, _ in normalised] == [(B, C, D), (A,)]
    assert normalised[0][2] == pytest.approx(np.log(0.45) / 1.5, rel=1e-6)
    assert normalised[1][2] == pytest.approx(np.log(0.5) / (7 / 6), rel=1e-6)
    # Once "a" fills the pool, "b c" must go on: its longer ending can still score better.
    assert decoded(search(table, length_alpha=1.0, num_results=1))[0][0] == (B, C, D)


def test_the_heuristic_stop_can_miss_a_long_winner_the_exact_one_finds():
    E, F = 8, 9
    table = a_or_b_then(0.6, (D, E, F), vocab_size=10)
    options = dict(length_alpha=2.0, num_results=1, max_length=7)
    # "b c d e f": log 0.3 / (11/6)^2 = -0.358 beats "a": log 0.5 / (7/6)^2 = -0.509, but
    # after "a" fills the pool, "b c" at its next length scores log 0.3 / (8/6)^2 = -0.677.
    assert decoded(search(table, **options))[0][0] == (B, C, D, E, F)
    assert decoded(search(table, exact_stop=False, **options))[0][0] == (A,)


def test_banned_ids_and_empty_suggestions_never_returned():
    table = chain(
        {
            BOS: {UNK: 0.5, EOS: 0.3, A: 0.1, PAD: 0.05, BOS: 0.05},
            A: {UNK: 0.6, EOS: 0.4},
        }
    )
    result = search(table)
    assert [seq for seq, _, _ in decoded(result)] == [(A,)]
    ids = result["ids"].numpy()
    assert not np.isin(ids, [UNK, BOS, EOS]).any()
    assert (result["lengths"].numpy() > 0).sum() == 1
    assert np.isneginf(result["scores"].numpy()[0, 1:]).all()
    assert np.isneginf(result["log_probs"].numpy()[0, 1:]).all()
    assert (ids[0, 1:] == PAD).all()


def test_over_long_hypotheses_dropped():
    table = chain({BOS: {A: 1.0}, A: {A: 0.9, EOS: 0.1}})
    result = search(table, max_length=4, no_repeat_bigrams=False)
    assert result["ids"].shape == (1, 5, 4)
    assert [seq for seq, _, _ in decoded(result)] == [(A,), (A, A), (A, A, A)]
    endless = search(chain({BOS: {A: 1.0}, A: {A: 1.0}}), max_length=4, no_repeat_bigrams=False)
    assert decoded(endless) == []
    assert (endless["ids"].numpy() == 0).all() and (endless["lengths"].numpy() == 0).all()


def test_order_variants_collapse_to_the_better():
    table = chain({BOS: {A: 0.55, B: 0.45}, A: {B: 0.6, EOS: 0.4}, B: {A: 0.7, EOS: 0.3}})
    collapsed = decoded(search(table, max_length=3))
    every = decoded(search(table, max_length=3, dedupe=False))
    assert [seq for seq, _, _ in collapsed] == [(A,), (B,), (B, A)]
    assert [seq for seq, _, _ in every] == [(A,), (B,), (B, A), (A, B)]


@pytest.mark.parametrize("row_prefix", [(A, B), (UNK, A), (C,)])
def test_prefix_forces_the_first_tokens(row_prefix):
    table = random_tables(1, seed=3)[0]
    found = decoded(search(table, max_length=4, beam_size=64, prefix=tf.constant([row_prefix])))
    expected = exhaustive(
        markov_log_probs(table),
        vocab_size=8,
        max_length=4,
        num_results=5,
        alpha=0.0,
        prefix=row_prefix,
    )
    assert all(seq[: len(row_prefix)] == row_prefix for seq, _, _ in found)
    assert_same(found, expected)


def test_one_beam_is_greedy():
    table = chain({BOS: {A: 0.6, B: 0.4}, A: {EOS: 0.5, C: 0.5}, B: {EOS: 1.0}, C: {EOS: 0.9}})
    greedy = search(table, beam_size=1, num_results=1, length_alpha=0.6)
    assert greedy["ids"].shape == (1, 1, 5)
    assert [seq for seq, _, _ in decoded(greedy)] == [(A,)]
    assert decoded(search(table, beam_size=2, num_results=1))[0][0] == (B,)


def test_scores_are_sums_of_the_step_log_probs():
    table = random_tables(1, seed=5)[0]
    log_probs = markov_log_probs(table)
    found = decoded(search(table, beam_size=3, max_length=6, length_alpha=0.6))
    assert len(found) == 5
    for seq, total, score in found:
        steps = [log_probs(seq[:i])[seq[i]] for i in range(len(seq))] + [log_probs(seq)[EOS]]
        assert total == pytest.approx(sum(steps), rel=1e-5)
        assert score == pytest.approx(total / ((5 + len(seq) + 1) / 6) ** 0.6, rel=1e-5)
    assert [s for _, _, s in found] == sorted([s for _, _, s in found], reverse=True)


def test_no_hypothesis_repeats_one_of_its_bigrams():
    table = chain({BOS: {A: 1.0}, A: {B: 0.9, EOS: 0.1}, B: {A: 0.8, EOS: 0.2}})
    looping = [seq for seq, _, _ in decoded(search(table, max_length=8, no_repeat_bigrams=False))]
    assert (A, B, A, B) in looping
    for seq, _, _ in decoded(search(table, max_length=8)):
        pairs = list(zip(seq, seq[1:]))
        assert len(pairs) == len(set(pairs)) and all(a != b for a, b in pairs), seq
