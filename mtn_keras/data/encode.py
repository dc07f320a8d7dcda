"""Sessions to the int32 arrays the models train on (docs/contracts.md, "Encoded sessions").

Pure numpy. Pair t predicts query t+1 from queries 0..t; out-of-vocabulary tokens (words,
or under a WordPiece vocabulary the words it cannot spell) get ids V + j in the
source-extended vocabulary of the copy head.
"""

from typing import NamedTuple, Sequence

import numpy as np

from mtn_keras.data.vocab import BOS, EOS, UNK, Vocabulary


class EncodedSession(NamedTuple):
    """One session of S queries, n = max_tokens (shapes as in docs/contracts.md)."""

    tokens: np.ndarray  # (S, n) in-vocabulary ids, <unk> for other words, 0-padded
    ext: np.ndarray  # (S, n) as tokens, the j-th distinct unknown word as V + j
    oov: list[str]  # the unknown words, oov[j] printed for id V + j
    decoder_input: np.ndarray  # (S-1, n+1) <bos> then the in-vocabulary ids of query t+1
    target: np.ndarray  # (S-1, n+1) ids of query t+1 (V + j when copyable) then <eos>


def encode_session(queries: Sequence[str], vocab: Vocabulary, max_tokens: int) -> EncodedSession:
    """The arrays of one session of normalised queries, each truncated to `max_tokens` tokens."""
    size, n = len(vocab), max_tokens
    words = [vocab.split(query)[:n] for query in queries]
    ids = [vocab.encode(query_words) for query_words in words]
    oov: dict[str, int] = {}  # unknown word -> j, in order of first appearance
    first_seen: dict[str, int] = {}  # unknown word -> index of the first query holding it
    ext = []
    for t, (query_words, query_ids) in enumerate(zip(words, ids)):
        row = []
        for word, i in zip(query_words, query_ids):
            if i == UNK:
                first_seen.setdefault(word, t)
                i = size + oov.setdefault(word, len(oov))
            row.append(i)
        ext.append(row)
    decoder_input, target = [], []
    for t in range(1, len(queries)):
        decoder_input.append([BOS] + ids[t])
        copyable = [
            size + oov[word] if i == UNK and first_seen[word] < t else i
            for word, i in zip(words[t], ids[t])
        ]
        target.append(copyable + [EOS])
    return EncodedSession(
        tokens=_padded(ids, n),
        ext=_padded(ext, n),
        oov=list(oov),
        decoder_input=_padded(decoder_input, n + 1),
        target=_padded(target, n + 1),
    )


def encode_buckets(
    sessions: Sequence[Sequence[str]], vocab: Vocabulary, max_tokens: int
) -> dict[int, dict[str, np.ndarray]]:
    """Sessions of 2+ queries encoded and stacked per number of queries S, in input order.

    Each bucket: `session_tokens` (N,S,n), `session_ext` (N,S,n), `decoder_input` and
    `target` (N,S-1,n+1), and `line` (N,), each session's index in `sessions`. Sessions of
    fewer than 2 queries have no pair and are left out.
    """
    grouped: dict[int, list[tuple[int, EncodedSession]]] = {}
    for line, queries in enumerate(sessions):
        if len(queries) >= 2:
            encoded = encode_session(queries, vocab, max_tokens)
            grouped.setdefault(len(queries), []).append((line, encoded))
    return {
        s: {
            "session_tokens": np.stack([e.tokens for _, e in encoded]),
            "session_ext": np.stack([e.ext for _, e in encoded]),
            "decoder_input": np.stack([e.decoder_input for _, e in encoded]),
            "target": np.stack([e.target for _, e in encoded]),
            "line": np.array([line for line, _ in encoded], dtype=np.int64),
        }
        for s, encoded in sorted(grouped.items())
    }


def _padded(rows: list[list[int]], width: int) -> np.ndarray:
    """The rows as an int32 (len(rows), width) array, 0-padded on the right."""
    array = np.zeros((len(rows), width), dtype=np.int32)
    for r, row in enumerate(rows):
        array[r, : len(row)] = row
    return array
