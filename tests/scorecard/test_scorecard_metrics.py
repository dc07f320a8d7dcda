"""Corpus BLEU, modified n-gram precision, SR@k and perplexity against hand-worked values."""

import math

import pytest
import sacrebleu

from mtn_keras.data.pairs import session_pairs
from mtn_keras.scorecard import corpus_scores, perplexity, success_rate

# Made-up queries. Worked by hand (matched / total n-grams, clipped by the reference counts):
#   hyp "cheap flights to new york"  ref "cheap flights to new york city": 5/5 4/4 3/3 2/2
#   hyp "weather paris"              ref "weather in paris":                2/2 0/1 0/0 0/0
#   hyp "tea tea tea"                ref "green tea":                       1/3 0/2 0/1 0/0
HYPS = ["cheap flights to new york", "weather paris", "tea tea tea"]
REFS = ["cheap flights to new york city", "weather in paris", "green tea"]


def test_hand_worked_precisions_and_bleu():
    scores = corpus_scores(HYPS, REFS)
    p = [8 / 10, 4 / 7, 3 / 4, 2 / 2]
    assert scores["precisions"] == pytest.approx([100 * x for x in p])
    assert scores["sys_len"] == 10 and scores["ref_len"] == 11
    bp = math.exp(1 - 11 / 10)
    assert scores["bp"] == pytest.approx(bp)
    assert scores["bleu"] == pytest.approx(100 * bp * math.prod(p) ** 0.25)


def test_no_brevity_penalty_when_longer_and_zero_bleu_without_4gram_match():
    scores = corpus_scores(["blue suede shoes sale"], ["red suede shoes"])
    assert scores["bp"] == 1.0
    assert scores["precisions"] == pytest.approx([50.0, 100 / 3, 0.0, 0.0])
    assert scores["bleu"] == 0.0


def test_matches_sacrebleu_corpus_bleu():
    hyps = HYPS + ["", "pizza near me", "cheap flights to new york city", "new york pizza"]
    refs = REFS + [
        "pizza",
        "pizza delivery near me",
        "cheap flights to new york",
        "new york pizza places",
    ]
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", smooth_method="none")
    scores = corpus_scores(hyps, refs)
    assert scores["bleu"] == pytest.approx(expected.score)
    assert scores["precisions"] == pytest.approx(expected.precisions)
    assert scores["bp"] == pytest.approx(expected.bp)


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        corpus_scores(["a"], ["a", "b"])


def test_success_rate_at_k():
    lists = [["lego sets", "lego city"], ["bike repair"], [], ["red shoes", "blue shoes", "shoes"]]
    refs = ["lego city", "bike repair", "maps", "shoes"]
    assert success_rate(lists, refs, 1) == pytest.approx(25.0)
    assert success_rate(lists, refs, 2) == pytest.approx(50.0)
    assert success_rate(lists, refs, 5) == pytest.approx(75.0)
    assert success_rate([["shoe"]], ["shoes"], 5) == 0.0


def test_perplexity():
    assert perplexity(4 * math.log(10.0), 4) == pytest.approx(10.0)
    with pytest.raises(ValueError):
        perplexity(1.0, 0)


def test_session_pairs_unrolls_every_prefix():
    sessions = [["a b", "a c", "d"], ["x", "y"], ["lonely"]]
    assert session_pairs(sessions) == [
        (["a b"], "a c"),
        (["a b", "a c"], "d"),
        (["x"], "y"),
    ]
