"""The vocabulary: special tokens first, then words by falling count (or WordPiece pieces,
see `wordpiece.py`); queries to tokens and back; vocab.txt I/O."""

from collections import Counter
from typing import Iterable, Mapping

from mtn_keras.data import wordpiece

# The special tokens and their ids: the one definition, imported wherever an id is meant.
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")
PAD, UNK, BOS, EOS = 0, 1, 2, 3


class Vocabulary:
    """Maps tokens to ids and back; id = position in `tokens`, the four specials first.
    The tokens are words, or WordPiece pieces when the vocabulary holds `##` pieces."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = list(tokens)
        if tuple(self._tokens[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(
                f"a vocabulary starts with {SPECIALS}, not {self._tokens[: len(SPECIALS)]}"
            )
        self._ids = {token: i for i, token in enumerate(self._tokens)}
        if len(self._ids) != len(self._tokens):
            raise ValueError("a vocabulary lists each token once")
        self.pieces = wordpiece.is_piece_vocabulary(self._tokens)
        self._spelt: dict[str, list[str]] = {}  # word -> its tokens, as `split` makes them

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], min_count: int = 1) -> "Vocabulary":
        """The words counted at least `min_count` times, most frequent first, ties by spelling."""
        words = [word for word, count in counts.items() if count >= min_count]
        words.sort(key=lambda word: (-counts[word], word))
        return cls(SPECIALS + tuple(w for w in words if w not in SPECIALS))

    @classmethod
    def from_sessions(cls, sessions: Iterable[Iterable[str]], min_count: int = 1) -> "Vocabulary":
        """The vocabulary of the words in these sessions' queries (see `from_counts`)."""
        counts = Counter(w for queries in sessions for query in queries for w in query.split())
        return cls.from_counts(counts, min_count)

    @classmethod
    def from_pieces(cls, sessions: Iterable[Iterable[str]], size: int) -> "Vocabulary":
        """A WordPiece vocabulary of about `size` tokens learnt from these sessions' queries."""
        return cls(wordpiece.learn((q for queries in sessions for q in queries), size, SPECIALS))

    @classmethod
    def load(cls, path: str) -> "Vocabulary":
        """Reads vocab.txt: one token per line, the line number (from 0) being its id.
        Raises ValueError naming the file for one that is not UTF-8 or not a vocabulary."""
        try:
            with open(path, encoding="utf-8") as file:
                return cls(line.rstrip("\n") for line in file)
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 (byte {error.start}); not a vocab.txt") from None
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    def save(self, path: str) -> None:
        """Writes vocab.txt (see `load`)."""
        with open(path, "w", encoding="utf-8") as file:
            file.writelines(token + "\n" for token in self._tokens)

    @property
    def tokens(self) -> list[str]:
        """All tokens, indexed by id."""
        return self._tokens

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, word: str) -> bool:
        return word in self._ids

    def split(self, query: str) -> list[str]:
        """The tokens of a normalised query: its words, or their pieces (a word that cannot
        be spelt stays whole, and is unknown)."""
        if not self.pieces:
            return query.split()
        tokens = []
        for word in query.split():
            if word not in self._spelt:
                self._spelt[word] = wordpiece.spell(word, self._ids) or [word]
            tokens += self._spelt[word]
        return tokens

    def join(self, tokens: Iterable[str]) -> str:
        """Tokens back to a query (pieces joined into their words)."""
        return wordpiece.join(tokens) if self.pieces else " ".join(t for t in tokens if t)

    def id(self, word: str) -> int:
        """The id of `word`, `<unk>`'s if it is not in the vocabulary."""
        return self._ids.get(word, UNK)

    def encode(self, words: Iterable[str]) -> list[int]:
        """The ids of `words` (`<unk>` for unknown ones)."""
        get = self._ids.get
        return [get(word, UNK) for word in words]
