"""Reproducible shuffles of a target: its key, the counter-based RNG and the permutation, as
a spec.

This module is the plain reference (Python integers, slow and clear) of what the Numba
backend (backends/cpu/local.py) and the CUDA kernel (gpu_kernels/local.cu) compute bit for
bit. Shuffle s of a target with key k under seed S depends on (S, k, s) alone, not on the
backend, the batch, the thread, the order of work or the queries it is aligned with.

Key: a target's key is its identifier's, subject_key(id): the first 8 bytes of the
BLAKE2b digest (8-byte digest, no key, no salt) of the id in UTF-8, as a little-endian
integer, shifted right by one bit (0 <= key < 2**63). So the same pair gets the same
shuffles, and the same p-value, whatever the order or grouping of the input; every query
against one target sees the same shuffles of it (one set serves them all).

RNG: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2,
3", SC11; the Random123 library, whose known-answer vectors tests/test_local.py checks).
For one (seed, key, shuffle), 0 <= seed < 2**64, 0 <= key < 2**63, 0 <= shuffle < 2**32,
the stream is
    block c = Philox4x32-10(counter=(c, shuffle, key mod 2**32, key >> 32),
                            key=(seed mod 2**32, seed >> 32))     for c = 0, 1, 2, ...
and the stream's words are the four 32-bit words of block 0, then of block 1, and so on,
each used once, in order.

Bounded integers: uniform in [0, s) for 1 <= s < 2**32 by Lemire's multiply-shift with
rejection ("Fast random integer generation in an interval", ACM TOMACS 2019): x = next
word, m = x * s (64 bits); while m mod 2**32 < (2**32 - s) mod s, draw again; the result is
m >> 32. The threshold only needs computing when m mod 2**32 < s.

Permutation: Fisher-Yates (Durstenfeld): a = [0, 1, ..., n-1]; for i = n-1 down to 1,
j = bounded(i + 1), swap a[i] and a[j]. Shuffle s of a target T is T[a[0]], T[a[1]], ...
(the same swaps applied to T's letters directly), so it is a uniformly random permutation of
T that keeps T's composition.
"""
from __future__ import annotations

import hashlib

import numpy as np

MASK32 = 0xFFFF_FFFF
PHILOX_M = (0xD2511F53, 0xCD9E8D57)  # round multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)  # key schedule (Weyl) increments
ROUNDS = 10


def philox4x32(counter: tuple[int, int, int, int], key: tuple[int, int],
               rounds: int = ROUNDS) -> tuple[int, int, int, int]:
    """One Philox4x32 block: four 32-bit words from a 4-word counter and a 2-word key."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) & MASK32, (k1 + PHILOX_W[1]) & MASK32
        p0, p1 = PHILOX_M[0] * c0, PHILOX_M[1] * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32
    return c0, c1, c2, c3


def subject_key(identifier: str) -> int:
    """The RNG key of the target named `identifier` (the module docstring's definition)."""
    digest = hashlib.blake2b(identifier.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class Stream:
    """The word stream of one (seed, key, shuffle), with bounded integers drawn from it."""

    def __init__(self, seed: int, key: int, shuffle: int):
        if not (0 <= seed < 2**64 and 0 <= key < 2**63 and 0 <= shuffle < 2**32):
            raise ValueError(f"RNG key out of range: seed {seed}, key {key}, shuffle {shuffle}")
        self.key = (seed & MASK32, seed >> 32)
        self.rest = (shuffle, key & MASK32, key >> 32)
        self.block = 0
        self.words: list[int] = []

    def next(self) -> int:
        if not self.words:
            self.words = list(philox4x32((self.block, *self.rest), self.key))
            self.block += 1
        return self.words.pop(0)

    def bounded(self, s: int) -> int:
        """Uniform integer in [0, s), 1 <= s < 2**32 (Lemire, with rejection)."""
        m = self.next() * s
        if m & MASK32 < s:
            threshold = (2**32 - s) % s
            while m & MASK32 < threshold:
                m = self.next() * s
        return m >> 32


def permutation(n: int, seed: int, key: int, shuffle: int) -> np.ndarray:
    """The permutation a (int64, length n) of shuffle `shuffle` of the target with key `key`
    under `seed`.

    The shuffled target is target[a]. See the module docstring for the exact definition.
    """
    a = list(range(n))
    stream = Stream(seed, key, shuffle)
    for i in range(n - 1, 0, -1):
        j = stream.bounded(i + 1)
        a[i], a[j] = a[j], a[i]
    return np.array(a, dtype=np.int64)
