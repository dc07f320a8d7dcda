"""The WordPiece vocabulary: learnt with keras-hub, words spelt as keras-hub's tokenizer
spells them, text to pieces and back, and `prepare --subwords`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtn_keras.data import wordpiece
from mtn_keras.data.encode import encode_session
from mtn_keras.data.vocab import SPECIALS, UNK, Vocabulary

QUERIES = [
    "cheap flights",
    "cheap flight deals",
    "hotel deals",
    "hotels in rome",
    "rome hotels",
    "used cars",
    "used car prices",
    "car rental",
    "rental cars rome",
] * 5
WORD = st.text(alphabet="abcdefghilmnoprstuvy", min_size=1, max_size=14)


@pytest.fixture(scope="module")
def vocab():
    return Vocabulary.from_pieces([QUERIES], 60)


def test_data_a_learnt_piece_vocabulary_starts_with_the_specials(vocab):
    assert tuple(vocab.tokens[:4]) == SPECIALS and vocab.pieces
    assert any(t.startswith("##") for t in vocab.tokens) and "cheap" in vocab
    assert not Vocabulary([*SPECIALS, "cheap", "flights"]).pieces


@settings(max_examples=200, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=5))
def test_data_pieces_round_trip_to_the_text(vocab, words):
    query = " ".join(words)
    tokens = vocab.split(query)
    assert vocab.join(tokens) == query
    assert len(tokens) >= len(words)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=4))
def test_data_words_are_spelt_as_keras_hub_spells_them(vocab, words):
    import keras_hub

    tokenizer = keras_hub.tokenizers.WordPieceTokenizer(
        vocabulary=vocab.tokens, oov_token="<unk>", split_on_cjk=False, dtype="string"
    )
    query = " ".join(words)
    theirs = [t if isinstance(t, str) else t.decode() for t in tokenizer.tokenize(query)]
    ours = [t if t in vocab else "<unk>" for t in vocab.split(query)]
    assert ours == theirs


def test_data_a_word_no_piece_spells_stays_whole_and_unknown(vocab):
    assert wordpiece.spell("東京", vocab.tokens) is None
    assert vocab.split("cheap 東京") == ["cheap", "東京"]
    assert vocab.encode(vocab.split("cheap 東京"))[1] == UNK
    assert wordpiece.join(["##s", "car", "##s"]) == "s cars"


def test_data_an_unseen_word_is_encoded_as_pieces_of_the_session(vocab):
    """Pieces, not <unk>: the copy head can copy every piece of a word never seen in training."""
    assert "carentals" not in vocab
    encoded = encode_session(["carentals", "carentals rome"], vocab, max_tokens=12)
    pieces = vocab.split("carentals")
    assert len(pieces) > 1 and UNK not in encoded.tokens
    target = encoded.target[0][: len(pieces)]
    np.testing.assert_array_equal(target, encoded.tokens[0][: len(pieces)])
    assert encoded.oov == []


def test_data_prepare_with_subwords(made_up_log, tmp_path, capsys):
    from mtn_keras.base.config import configure
    from mtn_keras.data.prepared import load_stats
    from mtn_keras.prepare import main

    out = tmp_path / "data"
    assert (
        main(
            [
                "--input",
                str(made_up_log),
                "--out",
                str(out),
                "--split",
                "80/10/10",
                "--subwords",
                "80",
            ]
        )
        == 0
    )
    assert "WordPiece vocabulary" in capsys.readouterr().out
    stats, vocab = load_stats(str(out)), Vocabulary.load(str(out / "vocab.txt"))
    assert vocab.pieces and stats["vocab_size"] == len(vocab) <= 80
    options = stats["options"]
    assert options["subwords"] == 80 and 1 <= options["max_query_pieces"] <= 20
    assert configure("tiny", stats, len(vocab))[0].max_query_tokens == options["max_query_pieces"]
    sessions = [line.split("\t") for line in (out / "train.tsv").read_text().splitlines()]
    assert all(vocab.join(vocab.split(q)) == q for s in sessions for q in s)


def test_data_prepare_refuses_a_tiny_piece_vocabulary(tmp_path, capsys):
    from mtn_keras.prepare import main

    with pytest.raises(SystemExit) as exit:
        main(["--input", "log.txt", "--out", str(tmp_path / "d"), "--subwords", "5"])
    assert exit.value.code == 2 and "--subwords" in capsys.readouterr().err
