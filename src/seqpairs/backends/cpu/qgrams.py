"""Numba CPU kernels of the q-gram counts that the pruning's counting filter reads
(docs/pruning.md): per pair, how many of A's q-gram positions hold a q-gram that occurs in
B, and the same of B's in A; the smaller of the two. And the densest window of such
positions (section 4's windowed filter): per sequence of the pair, the most that a run of
at least `least` consecutive positions holds beyond `density` a position.

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
def _bitsets(first, stop, codes, offsets, q, bits, sets, slots, repeated):
    """The bitsets of sequences first..stop-1, each q-gram position's slot, and whether
    its slot came before in its sequence."""
    mask = (np.int64(1) << (2 * q)) - 1
    for s in range(first, stop):
        for w in range(sets.shape[1]):
            sets[s, w] = 0
        code = np.int64(0)
        for k in range(offsets[s], offsets[s + 1]):
            code = ((code << 2) | codes[k]) & mask
            if k - offsets[s] >= q - 1:
                slot = _slot(code, q, bits)
                bit = np.uint64(1) << np.uint64(slot & 63)
                repeated[k] = (sets[s, slot >> 6] & bit) != 0
                sets[s, slot >> 6] |= bit
                slots[k] = slot


@njit(inline="always")
def _has(bitset, slot):
    return (bitset[slot >> 6] >> np.uint64(slot & 63)) & np.uint64(1)


@njit(nogil=True, cache=True)
def _shared(first, stop, offsets, q, slots, repeated, repeats, repeat_slots, sets, pa, pb,
            out):
    """The counts of pairs first..stop-1: B's positions in A's bitset, and A's positions in
    B's as the slots both hold (B's first positions of a slot found in A's bitset) plus
    A's repeated slots found in B's."""
    for k in range(first, stop):
        s, t = pa[k], pb[k]
        in_a = 0
        both = 0
        for p in range(offsets[t] + q - 1, offsets[t + 1]):
            hit = _has(sets[s], slots[p])
            in_a += hit
            if not repeated[p]:
                both += hit
        in_b = both
        for r in range(repeats[s], repeats[s + 1]):
            in_b += _has(sets[t], repeat_slots[r])
        out[k] = min(in_a, in_b)


@njit(inline="always")
def _densest_side(offsets, q, slots, sets, s, t, least, density):
    """The most, over runs of at least `least` consecutive q-gram positions of sequence s,
    of (the run's positions whose slot is in t's bitset) - density x (its positions):
    -inf where s has fewer positions. Positions u..v-1 as prefix counts at v and u = v -
    least, both kept by a moving position, the least prefix seen at u so far."""
    positions = offsets[s + 1] - offsets[s] - q + 1
    if positions < least:
        return -np.inf
    first = offsets[s] + q - 1  # where the slot of position 0 is stored
    at_v = at_u = 0
    for x in range(least):
        at_v += np.int64(_has(sets[t], slots[first + x]))
    lowest = 0.0
    best = np.float64(at_v) - density * least
    for v in range(least + 1, positions + 1):
        at_v += np.int64(_has(sets[t], slots[first + v - 1]))
        u = v - least
        at_u += np.int64(_has(sets[t], slots[first + u - 1]))
        lowest = min(lowest, np.float64(at_u) - density * u)
        best = max(best, (np.float64(at_v) - density * v) - lowest)
    return best


@njit(nogil=True, cache=True)
def _densest(first, stop, offsets, q, slots, sets, pa, pb, least, density, out):
    for k in range(first, stop):
        out[k] = min(_densest_side(offsets, q, slots, sets, pa[k], pb[k], least[k], density),
                     _densest_side(offsets, q, slots, sets, pb[k], pa[k], least[k], density))


class QGramCounts:
    """The contract's qgram_shared kernel: called with (pa, pb), int32 counts, at least the
    number of q-gram positions of either sequence whose q-gram occurs in the other (the
    smaller); densest(pa, pb, least, density), float64: the least over the pair's two
    sequences of their densest runs of at least least[k] positions (_densest_side)."""

    def __init__(self, codes, offsets, q: int, bits: int, threads: int | None = None):
        n = len(offsets) - 1
        self.sets = np.empty((n, max(1, (1 << bits) // 64)), dtype=np.uint64)
        self.slots = np.zeros(len(codes), dtype=np.uint16 if bits <= 16 else np.uint32)
        self.repeated = np.zeros(len(codes), dtype=np.bool_)
        in_parallel(_bitsets, n, threads, codes, offsets, q, bits, self.sets, self.slots,
                    self.repeated)
        where = np.flatnonzero(self.repeated)  # each sequence's repeated slots, in its range
        self.repeat_slots = self.slots[where]
        self.repeats = np.searchsorted(where, offsets).astype(np.int64)
        self.offsets, self.q, self.threads = offsets, q, threads

    def __call__(self, pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        out = np.empty(len(pa), dtype=np.int32)
        if len(pa):
            in_parallel(_shared, len(pa), self.threads, self.offsets, self.q, self.slots,
                        self.repeated, self.repeats, self.repeat_slots, self.sets, pa, pb,
                        out)
        return out

    def densest(self, pa, pb, least, density: float):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        least = np.ascontiguousarray(least, dtype=np.int64)
        out = np.empty(len(pa), dtype=np.float64)
        if len(pa):
            in_parallel(_densest, len(pa), self.threads, self.offsets, self.q, self.slots,
                        self.sets, pa, pb, least, float(density), out)
        return out
