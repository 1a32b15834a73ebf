"""Numba CPU kernel of the q-gram counts that the pruning's counting filter reads
(docs/pruning.md): per pair, how many of A's q-gram positions hold a q-gram that occurs in
B, and the same of B's in A; the smaller of the two.

Each sequence's q-grams are a presence bitset of 2^bits bits (a q-gram's 2-bit code, folded
by a multiplicative hash when 4^q has more bits): a hash collision can only add to a
count, so every count is at least the exact one, which is what the filter's bound needs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .batch import in_parallel

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always")
def _slot(code, q, bits):
    if 2 * q <= bits:
        return code
    return np.int64((np.uint64(code) * GOLDEN) >> np.uint64(64 - bits))


@njit(nogil=True, cache=True)
def _bitsets(first, stop, codes, offsets, q, bits, sets):
    """The bitsets of sequences first..stop-1."""
    mask = (np.int64(1) << (2 * q)) - 1
    for s in range(first, stop):
        for w in range(sets.shape[1]):
            sets[s, w] = 0
        code = np.int64(0)
        for k in range(offsets[s], offsets[s + 1]):
            code = ((code << 2) | codes[k]) & mask
            if k - offsets[s] >= q - 1:
                slot = _slot(code, q, bits)
                sets[s, slot >> 6] |= np.uint64(1) << np.uint64(slot & 63)


@njit(inline="always")
def _present(codes, start, stop, q, bits, bitset):
    """Positions of codes[start:stop] whose q-gram is in bitset."""
    mask = (np.int64(1) << (2 * q)) - 1
    code = np.int64(0)
    count = 0
    for k in range(start, stop):
        code = ((code << 2) | codes[k]) & mask
        if k - start >= q - 1:
            slot = _slot(code, q, bits)
            count += (bitset[slot >> 6] >> np.uint64(slot & 63)) & np.uint64(1)
    return count


@njit(nogil=True, cache=True)
def _shared(first, stop, codes, offsets, sets, pa, pb, q, bits, out):
    """The counts of pairs first..stop-1."""
    for k in range(first, stop):
        s, t = pa[k], pb[k]
        in_b = _present(codes, offsets[s], offsets[s + 1], q, bits, sets[t])
        in_a = _present(codes, offsets[t], offsets[t + 1], q, bits, sets[s])
        out[k] = min(in_a, in_b)


def counter(codes, offsets, q: int, bits: int, threads: int | None = None):
    """The contract's qgram_shared kernel: (pa, pb) -> int32 counts, at least the number
    of q-gram positions of either sequence whose q-gram occurs in the other (the
    smaller)."""
    sets = np.empty((len(offsets) - 1, max(1, (1 << bits) // 64)), dtype=np.uint64)
    in_parallel(_bitsets, len(offsets) - 1, threads, codes, offsets, q, bits, sets)

    def shared(pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        out = np.empty(len(pa), dtype=np.int32)
        if len(pa):
            in_parallel(_shared, len(pa), threads, codes, offsets, sets, pa, pb, q, bits, out)
        return out

    return shared
