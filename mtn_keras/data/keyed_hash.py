"""A string's keyed 62-bit hash, SipHash-2-4 as TensorFlow's `to_hash_bucket_strong` computes
it with KEY and BUCKETS: data time (no TensorFlow) can write a query as its hash alone, and the
serving graph can find it, without the text being kept anywhere."""

from collections.abc import Sequence

import numpy as np

KEY = (0x6D746E2D6B657261, 0x7320636869646C64)  # fixed: hashes written at data time must match
BUCKETS = 2**62  # the hash modulo this: non-negative in an int64
MASK = 2**64 - 1
START = (0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573)


def _rotate(x: int, bits: int) -> int:
    return ((x << bits) | (x >> (64 - bits))) & MASK


def keyed_hash(text: str) -> int:
    """SipHash-2-4 of `text`'s UTF-8 bytes under KEY, modulo BUCKETS."""
    data = text.encode("utf-8")
    k0, k1 = KEY
    v = [START[0] ^ k0, START[1] ^ k1, START[2] ^ k0, START[3] ^ k1]

    def rounds(n: int) -> None:
        for _ in range(n):
            v[0] = (v[0] + v[1]) & MASK
            v[1] = _rotate(v[1], 13) ^ v[0]
            v[0] = _rotate(v[0], 32)
            v[2] = (v[2] + v[3]) & MASK
            v[3] = _rotate(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & MASK
            v[3] = _rotate(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & MASK
            v[1] = _rotate(v[1], 17) ^ v[2]
            v[2] = _rotate(v[2], 32)

    whole = len(data) - len(data) % 8
    blocks = [int.from_bytes(data[i : i + 8], "little") for i in range(0, whole, 8)]
    blocks.append(int.from_bytes(data[whole:], "little") | (len(data) & 0xFF) << 56)
    for block in blocks:
        v[3] ^= block
        rounds(2)
        v[0] ^= block
    v[2] ^= 0xFF
    rounds(4)
    return (v[0] ^ v[1] ^ v[2] ^ v[3]) % BUCKETS


def keyed_hashes(texts: Sequence[str]) -> np.ndarray:
    """[N] int64: `keyed_hash` of each of `texts`, computed on numpy arrays for all the texts
    of one number of 8-byte blocks at once (a log's millions of distinct queries)."""
    data = [text.encode("utf-8") for text in texts]
    lengths = np.fromiter(map(len, data), np.int64, len(data))
    found = np.zeros(len(data), np.int64)
    for whole in np.unique(lengths // 8).tolist():
        at = np.flatnonzero(lengths // 8 == whole)
        padded = b"".join(data[i].ljust(8 * whole + 8, b"\0") for i in at)
        blocks = np.frombuffer(padded, "<u8").reshape(len(at), whole + 1).copy()
        blocks[:, whole] |= (lengths[at] & 0xFF).astype(np.uint64) << np.uint64(56)
        k0, k1 = (np.uint64(k) for k in KEY)
        v = [np.full(len(at), np.uint64(c)) for c in START]
        v = [v[0] ^ k0, v[1] ^ k1, v[2] ^ k0, v[3] ^ k1]
        for column in blocks.T:
            v[3] ^= column
            _array_rounds(v, 2)
            v[0] ^= column
        v[2] ^= np.uint64(0xFF)
        _array_rounds(v, 4)
        found[at] = ((v[0] ^ v[1] ^ v[2] ^ v[3]) % np.uint64(BUCKETS)).astype(np.int64)
    return found


def _array_rounds(v: list[np.ndarray], n: int) -> None:
    """`n` SipRounds on arrays of uint64 (their sums wrap as SipHash's do)."""

    def rotate(x: np.ndarray, bits: int) -> np.ndarray:
        return (x << np.uint64(bits)) | (x >> np.uint64(64 - bits))

    for _ in range(n):
        v[0] += v[1]
        v[1] = rotate(v[1], 13) ^ v[0]
        v[0] = rotate(v[0], 32)
        v[2] += v[3]
        v[3] = rotate(v[3], 16) ^ v[2]
        v[0] += v[3]
        v[3] = rotate(v[3], 21) ^ v[0]
        v[2] += v[1]
        v[1] = rotate(v[1], 17) ^ v[2]
        v[2] = rotate(v[2], 32)
