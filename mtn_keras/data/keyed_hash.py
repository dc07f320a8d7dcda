"""A string's keyed 62-bit hash, SipHash-2-4 as TensorFlow's `to_hash_bucket_strong` computes
it with KEY and BUCKETS: data time (no TensorFlow) can write a query as its hash alone, and the
serving graph can find it, without the text being kept anywhere."""

KEY = (0x6D746E2D6B657261, 0x7320636869646C64)  # fixed: hashes written at data time must match
BUCKETS = 2**62  # the hash modulo this: non-negative in an int64
MASK = 2**64 - 1


def _rotate(x: int, bits: int) -> int:
    return ((x << bits) | (x >> (64 - bits))) & MASK


def keyed_hash(text: str) -> int:
    """SipHash-2-4 of `text`'s UTF-8 bytes under KEY, modulo BUCKETS."""
    data = text.encode("utf-8")
    k0, k1 = KEY
    v = [0x736F6D6570736575 ^ k0, 0x646F72616E646F6D ^ k1]
    v += [0x6C7967656E657261 ^ k0, 0x7465646279746573 ^ k1]

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
