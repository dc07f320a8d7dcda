"""Vocabulary and session encoding (docs/contracts.md, "Encoded sessions")."""

import numpy as np
import pytest

from mtn_keras.data.encode import encode_buckets, encode_session
from mtn_keras.data.vocab import BOS, EOS, PAD, SPECIALS, UNK, Vocabulary


def test_data_vocabulary_from_counts_orders_by_count_then_word(tmp_path):
    vocab = Vocabulary.from_counts({"bikes": 5, "red": 3, "blue": 3, "kites": 2}, min_count=3)
    assert vocab.tokens == list(SPECIALS) + ["bikes", "blue", "red"]
    assert (PAD, UNK, BOS, EOS) == (0, 1, 2, 3)
    assert len(vocab) == 7 and "red" in vocab and "kites" not in vocab
    assert vocab.encode(["red", "kites", "bikes"]) == [6, UNK, 4]
    vocab.save(tmp_path / "vocab.txt")
    assert Vocabulary.load(tmp_path / "vocab.txt").tokens == vocab.tokens


def test_data_vocabulary_from_sessions_counts_words():
    vocab = Vocabulary.from_sessions([["red bikes", "blue bikes"], ["red kites"]], min_count=2)
    assert vocab.tokens[4:] == ["bikes", "red"]


def test_data_vocabulary_needs_the_specials_first():
    with pytest.raises(ValueError):
        Vocabulary(["red", "<pad>", "<unk>", "<bos>", "<eos>"])


def test_data_encode_session_follows_the_contract():
    vocab = Vocabulary(list(SPECIALS) + ["red", "bikes", "cheap"])  # red 4, bikes 5, cheap 6
    V, n = 7, 3
    session = encode_session(["red zorro bikes", "cheap zorro", "blip red zorro bikes"], vocab, n)
    assert session.oov == ["zorro", "blip"]
    np.testing.assert_array_equal(session.tokens, [[4, UNK, 5], [6, UNK, 0], [UNK, 4, UNK]])
    np.testing.assert_array_equal(session.ext, [[4, V, 5], [6, V, 0], [V + 1, 4, V]])
    np.testing.assert_array_equal(session.decoder_input, [[BOS, 6, UNK, 0], [BOS, UNK, 4, UNK]])
    # pair 0: "zorro" occurs in query 0, so it is copyable; pair 1: "blip" first appears in
    # the target itself, so it is <unk>; the fourth word is cut by n = 3
    np.testing.assert_array_equal(session.target, [[6, V, EOS, 0], [UNK, 4, V, EOS]])
    for array in (session.tokens, session.ext, session.decoder_input, session.target):
        assert array.dtype == np.int32


def test_data_encode_session_of_one_query_has_no_pairs():
    session = encode_session(["red bikes"], Vocabulary(SPECIALS), 4)
    assert session.tokens.shape == (1, 4) and session.target.shape == (0, 5)


def test_data_encode_buckets_groups_by_number_of_queries():
    vocab = Vocabulary(list(SPECIALS) + ["a", "b"])
    sessions = [["a", "b"], ["a", "b", "a"], ["b"], ["b", "a"], ["a b", "b", "a a"]]
    buckets = encode_buckets(sessions, vocab, 2)
    assert sorted(buckets) == [2, 3]
    assert buckets[2]["session_tokens"].shape == (2, 2, 2)
    assert buckets[3]["decoder_input"].shape == (2, 2, 3) and buckets[3]["target"].shape == (
        2,
        2,
        3,
    )
    np.testing.assert_array_equal(buckets[2]["session_tokens"][1], [[5, 0], [4, 0]])
