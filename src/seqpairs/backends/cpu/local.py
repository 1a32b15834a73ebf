"""Numba kernel of PSSE (the contract's local_scores): local alignment scores of each query
against its target and against shuffles of the target (scoring/local.py's LocalScheme,
stats/shuffle.py).

Pairs are grouped by target (common.target_groups); a work item is a chunk of slots of
one group (slot 0 the target itself, slot s + 1 its shuffle s): the chunk shuffles the
target once per slot and aligns every query of the group against those letters, each with
its query profile (the matrix's rows of its letters, or its PSSM) built once.
The shuffle is the Philox4x32-10 / Lemire / Fisher-Yates stream of stats/shuffle.py, here in
uint64 arithmetic on 32-bit words. The alignment keeps one row of H and F (int32-safe:
scores and costs are bounded by MAX_COST and lengths by MAX_LENGTH).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...stats.shuffle import PHILOX_M, PHILOX_W, ROUNDS
from ..common import check_local_inputs, concatenate, target_groups
from .batch import in_parallel, thread_count

MASK32 = np.uint64(0xFFFF_FFFF)
SHIFT = np.uint64(32)
M0, M1 = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1])
W0, W1 = np.uint64(PHILOX_W[0]), np.uint64(PHILOX_W[1])
ONE = np.uint64(1)
TWO32 = np.uint64(1 << 32)
# Stream state (uint64[STATE]): four buffered words, index of the next one (4: empty),
# next block, key words, and the counter's fixed words (shuffle, pair low, pair high).
WORDS, POS, BLOCK, KEY, REST, STATE = 0, 4, 5, 6, 8, 11
GROUP_PAIRS = 64  # pairs sharing a target's shuffles in one chunk at most


@njit(inline="always")
def _philox(c0, c1, c2, c3, k0, k1):
    for r in range(ROUNDS):
        if r:
            k0 = (k0 + W0) & MASK32
            k1 = (k1 + W1) & MASK32
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = (p1 >> SHIFT) ^ c1 ^ k0, p1 & MASK32, (p0 >> SHIFT) ^ c3 ^ k1, p0 & MASK32
    return c0, c1, c2, c3


@njit(nogil=True, cache=True)
def start_stream(state, seed, pair, shuffle):
    """Reset `state` to the start of the stream of (seed, pair, shuffle) (all uint64)."""
    state[POS] = 4
    state[BLOCK] = 0
    state[KEY] = seed & MASK32
    state[KEY + 1] = seed >> SHIFT
    state[REST] = shuffle
    state[REST + 1] = pair & MASK32
    state[REST + 2] = pair >> SHIFT


@njit(inline="always")
def _next(state):
    pos = np.int64(state[POS])
    if pos == 4:
        w = _philox(state[BLOCK], state[REST], state[REST + 1], state[REST + 2], state[KEY],
                    state[KEY + 1])
        state[WORDS], state[WORDS + 1], state[WORDS + 2], state[WORDS + 3] = w
        state[BLOCK] += ONE
        pos = 0
    state[POS] = pos + 1
    return state[WORDS + pos]


@njit(nogil=True, cache=True)
def bounded(state, s):
    """Uniform uint64 in [0, s), 1 <= s < 2**32, from the stream (Lemire, with rejection)."""
    s = np.uint64(s)
    m = _next(state) * s
    if (m & MASK32) < s:
        threshold = (TWO32 - s) % s
        while (m & MASK32) < threshold:
            m = _next(state) * s
    return m >> SHIFT


@njit(nogil=True, cache=True)
def shuffle_in_place(a, n, state):
    """Fisher-Yates on a[:n], drawing from `state` (stats/shuffle.py permutation's swaps)."""
    for i in range(n - 1, 0, -1):
        j = bounded(state, i + 1)
        a[i], a[j] = a[j], a[i]


@njit(inline="always")
def _max(a, b):
    """max without a compare: LLVM turns `max` in this loop into data-dependent branches
    (x86 cmov-to-branch conversion), which random sequences mispredict (3x slower)."""
    d = np.int64(a) - np.int64(b)
    return a - (d & (d >> 63))


@njit(nogil=True, cache=True)
def _score(prof, m, target, n, opening, extend, h_row, f_row):
    """Best local score; prof[b, j] scores target letter b against query position j."""
    for j in range(m):
        h_row[j] = 0
        f_row[j] = -opening  # F(1, j) = H(0, j) - opening: row 0 has no gap to extend
    best = 0
    for i in range(n):
        p = prof[target[i]]
        diag = 0
        e = -opening  # E(i, 1): column 0 has no gap to extend
        for j in range(m):
            f = f_row[j]
            d = _max(_max(diag + p[j], f), 0)
            h = _max(d, e)
            # E(i, j+1) from H = max(d, E): E - opening never beats E - extend, so only d
            # is needed, which keeps one max on the row's dependency chain
            e = max(e - extend, d - opening)
            diag = h_row[j]
            h_row[j] = h
            f_row[j] = _max(f - extend, h - opening)
            best = max(best, h)
    return best


@njit(nogil=True, cache=True)
def _profile(prof, q, subst, pssm, use_pssm):
    """prof[b, j]: query position j's score against target letter b (the PSSM's row j, or
    the matrix's row of q[j])."""
    for b in range(prof.shape[0]):
        for j in range(q.shape[0]):
            prof[b, j] = pssm[j, b] if use_pssm else subst[q[j], b]


@njit(nogil=True, cache=True)
def _batch(first_chunk, stop_chunk, q_codes, q_offsets, t_codes, t_offsets, pair_query,
           pair_target, order, bounds, keys, subst, pssm, use_pssm, opening, extend, seed,
           chunk_group, chunk_start, chunk_stop, out, max_m, max_n):
    """The scores of chunks first_chunk..stop_chunk-1 (_chunks)."""
    k_letters = subst.shape[0]
    for c in range(first_chunk, stop_chunk):
        g = chunk_group[c]
        target = pair_target[order[bounds[g]]]
        t = t_codes[t_offsets[target]:t_offsets[target + 1]]
        n = t.shape[0]
        first, stop = chunk_start[c], chunk_stop[c]
        # the chunk's slots of the target, made once for all of the group's queries
        letters = np.empty((stop - first, max_n + 1), dtype=np.uint8)
        state = np.empty(STATE, dtype=np.uint64)
        for slot in range(first, stop):
            row = letters[slot - first]
            row[:n] = t
            if slot:
                start_stream(state, seed, np.uint64(keys[target]), np.uint64(slot - 1))
                shuffle_in_place(row, n, state)
        prof = np.empty((k_letters, max(max_m, 1)), dtype=np.int32)
        h_row = np.empty(max_m + 1, dtype=np.int32)
        f_row = np.empty(max_m + 1, dtype=np.int32)
        for r in range(bounds[g], bounds[g + 1]):
            k = order[r]
            query = pair_query[k]
            q = q_codes[q_offsets[query]:q_offsets[query + 1]]
            _profile(prof[:, :q.shape[0]], q, subst,
                     pssm[q_offsets[query]:q_offsets[query + 1]], use_pssm)
            for slot in range(first, stop):
                out[k, slot] = _score(prof, q.shape[0], letters[slot - first], n, opening,
                                      extend, h_row, f_row)


def _chunks(costs: np.ndarray, slots: int, threads: int):
    """(group, start slot, stop slot) of each chunk: slots of one group in chunks of up to
    64, fewer where the work is small (about 8 chunks a thread)."""
    size = max(1, min(64, slots, len(costs) * slots // (8 * threads) or 1))
    per_group = -(-slots // size)
    group = np.repeat(np.arange(len(costs), dtype=np.int64), per_group)
    start = np.tile(np.arange(per_group, dtype=np.int64) * size, len(costs))
    order = np.argsort(-np.repeat(costs, per_group), kind="stable")  # costliest first
    return group[order], start[order], np.minimum(start + size, slots)[order]


def local_scores(scheme, queries: list[np.ndarray], targets: list[np.ndarray],
                 pairs: np.ndarray, keys: np.ndarray, shuffles: int, seed: int,
                 threads: int | None = None, profiles: list[np.ndarray] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Best local scores of each pair (query index, target index) and of the pair's query
    against shuffles of its target.

    keys[t] is target t's RNG key (stats/shuffle.py); profiles[q] (int32 [m, K]), if
    given, scores query q's position j against target letter b instead of the matrix.
    Returns (real int32[P], shuffled int32[P, shuffles]), shuffled[k, s] the score
    against shuffle s of pair k's target.
    """
    queries, targets, pairs, keys, profiles = check_local_inputs(
        scheme, queries, targets, pairs, keys, shuffles, seed, profiles)
    slots = shuffles + 1
    out = np.zeros((len(pairs), slots), dtype=np.int32)
    if len(pairs):
        q_codes, q_offsets = concatenate(queries)
        t_codes, t_offsets = concatenate(targets)
        k_letters = len(scheme.alphabet)
        pssm = (np.concatenate(profiles).reshape(-1, k_letters) if profiles
                else np.zeros((0, k_letters), dtype=np.int32))
        order, bounds = target_groups(pairs[:, 1], GROUP_PAIRS)
        m, n = np.diff(q_offsets)[pairs[:, 0]], np.diff(t_offsets)[pairs[:, 1]]
        costs = np.add.reduceat((m * n)[order], bounds[:-1]) if len(order) else m
        group, start, stop = _chunks(costs, slots, thread_count(threads))
        in_parallel(_batch, len(group), threads, q_codes, q_offsets, t_codes, t_offsets,
                    pairs[:, 0].copy(), pairs[:, 1].copy(), order, bounds, keys,
                    scheme.matrix(), pssm, profiles is not None,
                    scheme.gap_open + scheme.gap_extend, scheme.gap_extend, np.uint64(seed),
                    group, start, stop, out, int(np.diff(q_offsets).max(initial=0)),
                    int(np.diff(t_offsets).max(initial=0)))
    return out[:, 0].copy(), out[:, 1:].copy()
