"""Subword pieces: a WordPiece vocabulary learnt with keras-hub, and words spelt from it.

A word is spelt greedily, longest piece first (BERT's WordPiece, as keras-hub's
`WordPieceTokenizer` does): its first piece as is, the others marked with `##`. A word that
cannot be spelt is one unknown token, which the copy head can still copy whole.
Normalised text has no `#`, so a token that starts with `##` can only be a piece.
"""

from typing import Container, Iterable

SUFFIX = "##"
# Longer words are not spelt (one unknown token), as keras-hub's tokenizer does past its
# own limit; serving cuts words to 64 characters anyway.
MAX_SPELT_CHARS = 100


def is_piece_vocabulary(tokens: Iterable[str]) -> bool:
    """True for a WordPiece vocabulary (one that holds `##` pieces), False for words."""
    return any(token.startswith(SUFFIX) for token in tokens)


def spell(word: str, pieces: Container[str]) -> list[str] | None:
    """The pieces of `word`, longest first from the left; None if it cannot be spelt."""
    if len(word) > MAX_SPELT_CHARS:
        return None
    spelt, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else SUFFIX + word[start:end]
            if piece in pieces:
                spelt.append(piece)
                start = end
                break
        else:
            return None
    return spelt


def join(tokens: Iterable[str]) -> str:
    """Tokens back to text: `##` pieces join the token before them (or start a word)."""
    text = " ".join(token for token in tokens if token)
    return text.replace(" " + SUFFIX, "").removeprefix(SUFFIX)


def learn(queries: Iterable[str], size: int, reserved: Iterable[str]) -> list[str]:
    """A WordPiece vocabulary of about `size` tokens (the `reserved` ones first) learnt
    from the words of normalised queries, with keras-hub's vocabulary builder."""
    queries = [query for query in queries if query]
    if not queries:
        raise ValueError("no word to learn pieces from")
    import keras_hub
    import tensorflow as tf  # only a subword prepare pays for TensorFlow

    return list(
        keras_hub.tokenizers.compute_word_piece_vocabulary(
            tf.data.Dataset.from_tensor_slices(queries).batch(1024),
            size,
            lowercase=False,
            strip_accents=False,
            split=True,
            split_on_cjk=False,
            suffix_indicator=SUFFIX,
            reserved_tokens=list(reserved),
        )
    )
