"""Numba CPU kernel of the SeqDist alignment (docs/seqdist.md): LANES pairs in lockstep,
one row of each in memory; cell() is the same recurrence for one pair (the traceback's).

Besides the cost H, each cell carries the counts of the path that the recurrence chose,
packed as backends/common.py lays them out (length, matches, first, last). A gap move
only adds to `length`; an aligned pair also sets `last` to the new length and `first` to
the smaller of itself and the new length (lengths only grow, so it is set once).
From them: aligned columns (first to last aligned pair, no end gaps) = last - first + 1
and leading end-gap columns = first - 1, so vsearch's iddef 2 identity is exactly
matches / aligned without a traceback. Costs come from a SeqDistScheme. The dense outputs
need only the cost and the length (dense_aligner): the same kernels then count the length
alone, a select instead of the aligned pair's five field operations (7-8% faster in the
kernel, 4-5% in the stage).
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload
from numba.np.numpy_support import from_dtype

from ..alignments import DIAG, LEFT, UP
from ..common import FIELD, FIELD_MASK, FIRST_SHIFT, LAST_SHIFT, check_lengths, unpack
from .batch import in_parallel

LEN_ONE = np.int64(1)
MATCH_ONE = np.int64(1) << FIELD
LAST_MASK = np.int64(FIELD_MASK) << LAST_SHIFT
FIRST_MASK = np.int64(FIELD_MASK) << FIRST_SHIFT
START = FIRST_MASK  # counts of an empty path: length 0, no aligned pair yet
# Pairs computed in lockstep, one per lane. A constant, and a multiple of 8, so that LLVM
# vectorises the lane loops instead of unrolling them (AVX-512 holds 8 doubles).
LANES = 64
# Which counts the kernels keep, chosen when Numba compiles them: a zero-length array
# whose dtype selects the aligned pair's step (_diag_counts, an overload, which Numba
# caches; a flag tested in the lane loop cost 8-10%, and a function passed in as an
# argument is compiled again in every process).
COUNTS = np.empty(0, np.int8)  # length, matches, first, last
LENGTH_ONLY = np.empty(0, np.int16)  # the length; the other fields hold nothing


@njit(inline="always")
def _diag_step(packed, eq):
    """Counts after an aligned pair: length + 1, matches + eq, last = length, first once."""
    packed += LEN_ONE + eq * MATCH_ONE
    length = packed & FIELD_MASK
    first = min((packed >> FIRST_SHIFT) & FIELD_MASK, length)
    return (packed & ~(LAST_MASK | FIRST_MASK)) | (first << FIRST_SHIFT) | (length << LAST_SHIFT)


def diag_counts(packed, eq, counts):
    """The counts after an aligned pair, those that `counts` (COUNTS, LENGTH_ONLY) keeps."""
    raise NotImplementedError  # compiled only, through _diag_counts


@overload(diag_counts, inline="always")
def _diag_counts(packed, eq, counts):
    if counts.dtype == from_dtype(COUNTS.dtype):  # Numba's type of the array's dtype
        return lambda packed, eq, counts: _diag_step(packed, eq)
    return lambda packed, eq, counts: packed + LEN_ONE


@njit(inline="always")
def cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p, up_h, up_p, subst_a, gap,
         homopolymer_gap, gap_row, gap_col, inc_row, inc_col):
    """One cell of the recurrence; returns (H, packed counts, move)."""
    # Homopolymer gap: B[j-1] equals the "last match" of the move stored at (i, j-1).
    eq_a = b == a
    if move == UP:
        homopolymer = eq_a
    elif move == LEFT:
        homopolymer = b == prev_b
    else:
        homopolymer = eq_a and b == prev_b
    g = homopolymer_gap if homopolymer else gap
    c1 = diag_h + subst_a[b]
    c2 = left_h + g * gap_row  # gap_row is 0.0 on the last row: trailing gaps are free
    c3 = up_h + g * gap_col  # gap_col is 0.0 on the last column
    if c1 < c2:
        if c1 < c3:
            return c1, _diag_step(diag_p, eq_a), DIAG
        return c3, up_p + inc_col, UP
    if c2 < c3:
        return c2, left_p + inc_row, LEFT
    return c3, up_p + inc_col, UP


@njit(nogil=True, boundscheck=False, cache=True)
def _row(width, H, P, Bt, a, s0, s1, s2, s3, lb, gap_row, inc_row, dh, dp, lh, lp, lm, lu,
         gap, homopolymer_gap, counts):
    """Columns 1..width of one row of LANES pairs in lockstep: cell() written branch-free
    over the lanes (one AVX-512 instruction does 8). H, P: the row (cost, packed counts),
    [j * LANES + lane], holding the row above on entry; Bt: B's letters the same way (row 0
    of it: no letter); dh/dp the cell up-left, lh/lp the cell left (cost, counts) and
    lm/lu whether its move is LEFT / UP (neither: DIAG; two flags make the homopolymer
    rule three operations instead of eight: the kernel 4-7% faster).
    Indices are unsigned so that Numba adds no wraparound, which would stop LLVM from
    vectorising."""
    for j in range(1, width + 1):
        o = np.uint64(j * LANES)
        q = np.uint64((j - 1) * LANES)
        for k in range(LANES):
            lane = np.uint64(k)
            # every load is unconditional (selects after), so that LLVM if-converts
            b, before = Bt[o + lane], Bt[q + lane]
            after_left, after_up = lm[lane], lu[lane]
            up_h, up_p = H[o + lane], P[o + lane]
            diag_p, left_h, left_p = dp[lane], lh[lane], lp[lane]
            cost_0, cost_1, cost_2, cost_3 = s0[lane], s1[lane], s2[lane], s3[lane]
            eq_a = b == a[lane]
            eq_prev = b == before
            # the homopolymer rule of cell(): UP -> eq_a, LEFT -> eq_prev, DIAG -> both
            homopolymer = (eq_a | after_left) & (eq_prev | after_up)
            g = homopolymer_gap if homopolymer else gap
            low = cost_0 if b == 0 else cost_1
            high = cost_2 if b == 2 else cost_3
            last_col = j == lb[lane]
            c1 = dh[lane] + (low if b < 2 else high)
            c2 = left_h + g * gap_row[lane]
            c3 = up_h + g * (0.0 if last_col else 1.0)
            is_diag = (c1 < c2) & (c1 < c3)
            is_left = (c1 >= c2) & (c2 < c3)  # no NaN: c1 >= c2 is not (c1 < c2)
            h = c2 if is_left else (c1 if is_diag else c3)
            p = up_p + (np.int64(0) if last_col else LEN_ONE)
            p = diag_counts(diag_p, eq_a, counts) if is_diag else p
            p = left_p + inc_row[lane] if is_left else p
            dh[lane], dp[lane] = up_h, up_p
            H[o + lane], P[o + lane] = h, p
            lh[lane], lp[lane] = h, p
            lm[lane], lu[lane] = is_left, not (is_left | is_diag)


@njit(nogil=True, boundscheck=False, cache=True)
def _group(codes, offsets, pa, pb, subst, gap, homopolymer_gap, cost, packed, At, Bt, H, P,
           lanes, counts):
    """LANES pairs (pa, pb; fewer repeat the last) through the recurrence in lockstep;
    their costs and counts into cost, packed. At, Bt, H, P and lanes are scratch."""
    la, lb, a, inc_row, dp, lp = lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5]
    moves = lanes[6].view(np.bool_)  # the left cell's move: LEFT (lm), UP (lu), else DIAG
    lm, lu = moves[:LANES], moves[LANES:2 * LANES]
    floats = lanes[7:].view(np.float64)  # the lanes' float64 rows
    s0, s1, s2, s3, gap_row, dh, lh = (floats[0], floats[1], floats[2], floats[3], floats[4],
                                       floats[5], floats[6])
    n = len(pa)
    rows = cols = 0
    for k in range(LANES):
        x, y = pa[min(k, n - 1)], pb[min(k, n - 1)]
        la[k], lb[k] = offsets[x + 1] - offsets[x], offsets[y + 1] - offsets[y]
        rows, cols = max(rows, la[k]), max(cols, lb[k])
    At[:rows * LANES] = 0  # letters past a pair's end: any, their cells are never read
    Bt[:(cols + 1) * LANES] = 0
    for k in range(LANES):
        x, y = pa[min(k, n - 1)], pb[min(k, n - 1)]
        for i in range(la[k]):
            At[i * LANES + k] = codes[offsets[x] + i]
        Bt[k] = -1
        for j in range(lb[k]):
            Bt[(j + 1) * LANES + k] = codes[offsets[y] + j]
    for j in range(cols + 1):
        for k in range(LANES):
            H[j * LANES + k] = gap * j
            P[j * LANES + k] = START + j * LEN_ONE
    for i in range(1, rows + 1):
        for k in range(LANES):
            letter = At[(i - 1) * LANES + k]
            a[k] = letter
            s0[k], s1[k], s2[k], s3[k] = (subst[letter, 0], subst[letter, 1], subst[letter, 2],
                                          subst[letter, 3])
            last_row = i == la[k]
            gap_row[k] = 0.0 if last_row else 1.0
            inc_row[k] = 0 if last_row else 1
            dh[k], dp[k] = H[k], P[k]
            lh[k], lp[k] = gap * i, START + i * LEN_ONE
            lm[k], lu[k] = False, True  # column 0 holds UP moves
            H[k], P[k] = lh[k], lp[k]
        _row(cols, H, P, Bt, a, s0, s1, s2, s3, lb, gap_row, inc_row, dh, dp, lh, lp, lm, lu,
             gap, homopolymer_gap, counts)
        for k in range(min(n, LANES)):
            if i == la[k]:
                cost[k], packed[k] = H[lb[k] * LANES + k], P[lb[k] * LANES + k]


@njit(nogil=True, cache=True)
def _align_groups(first_group, stop_group, codes, offsets, pa, pb, subst, gap,
                  homopolymer_gap, cost, packed, max_len, counts):
    """_group over the groups first_group..stop_group-1 of LANES pairs."""
    At = np.empty(max_len * LANES, dtype=np.int64)
    Bt = np.empty((max_len + 1) * LANES, dtype=np.int64)
    H = np.empty((max_len + 1) * LANES, dtype=np.float64)
    P = np.empty((max_len + 1) * LANES, dtype=np.int64)
    lanes = np.empty((14, LANES), dtype=np.int64)
    for g in range(first_group, stop_group):
        first, last = g * LANES, min(len(pa), (g + 1) * LANES)
        _group(codes, offsets, pa[first:last], pb[first:last], subst, gap, homopolymer_gap,
               cost[first:last], packed[first:last], At, Bt, H, P, lanes, counts)


def _aligner(codes, offsets, scheme, threads, counts):
    """(pa, pb) -> cost (float64) and packed counts (those `counts` keeps) of the pairs
    (pa[k] as A, pb[k] as B), indices into offsets. The pairs go through the recurrence
    LANES at a time, sorted by their lengths so that a group's shorter pairs wait little
    for its longer ones."""
    subst = scheme.matrix()
    lengths = np.diff(offsets)

    def align(pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        cost, packed = np.empty(len(pa)), np.empty(len(pa), dtype=np.int64)
        if len(pa):
            order = np.lexsort((lengths[pb], lengths[pa]))
            sorted_cost, sorted_packed = np.empty_like(cost), np.empty_like(packed)
            in_parallel(_align_groups, (len(pa) + LANES - 1) // LANES, threads, codes,
                        offsets, pa[order], pb[order], subst, scheme.gap,
                        scheme.homopolymer_gap, sorted_cost, sorted_packed,
                        check_lengths(offsets), counts)
            cost[order], packed[order] = sorted_cost, sorted_packed
        return cost, packed

    return align


def aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist kernel: (pa, pb) -> cost (float64) and length, matches,
    aligned, leading (int32) of the pairs."""
    align = _aligner(codes, offsets, scheme, threads, COUNTS)

    def full(pa, pb):
        cost, packed = align(pa, pb)
        return (cost, *unpack(packed))

    return full


def dense_aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist_dense kernel: (pa, pb) -> cost (float64) and length (int32)
    of the pairs, the same as aligner()'s."""
    align = _aligner(codes, offsets, scheme, threads, LENGTH_ONLY)

    def dense(pa, pb):
        cost, packed = align(pa, pb)
        return cost, (packed & FIELD_MASK).astype(np.int32)

    return dense
