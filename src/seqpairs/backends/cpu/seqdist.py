"""Numba CPU kernel of the SeqDist alignment (docs/seqdist.md), one row in memory.

Besides the cost H, each cell carries the counts of the path that the recurrence chose,
packed as backends/common.py lays them out (length, matches, first, last). A gap move
only adds to `length`; an aligned pair also sets `last` to the new length and `first` to
the smaller of itself and the new length (lengths only grow, so it is set once).
From them: aligned columns (first to last aligned pair, no end gaps) = last - first + 1
and leading end-gap columns = first - 1, so vsearch's iddef 2 identity is exactly
matches / aligned without a traceback. Costs come from a SeqDistScheme.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..alignments import DIAG, LEFT, UP
from ..common import FIELD, FIELD_MASK, FIRST_SHIFT, LAST_SHIFT, unpack
from .batch import pair_kernel

LEN_ONE = np.int64(1)
MATCH_ONE = np.int64(1) << FIELD
LAST_MASK = np.int64(FIELD_MASK) << LAST_SHIFT
FIRST_MASK = np.int64(FIELD_MASK) << FIRST_SHIFT
START = FIRST_MASK  # counts of an empty path: length 0, no aligned pair yet


@njit(inline="always")
def _diag_step(packed, eq):
    """Counts after an aligned pair: length + 1, matches + eq, last = length, first once."""
    packed += LEN_ONE + eq * MATCH_ONE
    length = packed & FIELD_MASK
    first = min((packed >> FIRST_SHIFT) & FIELD_MASK, length)
    return (packed & ~(LAST_MASK | FIRST_MASK)) | (first << FIRST_SHIFT) | (length << LAST_SHIFT)


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


@njit(nogil=True, cache=True)
def align_pair(codes, sa, la, sb, lb, subst, gap, homopolymer_gap, h_row, p_row):
    """SeqDist alignment of A = codes[sa:sa+la] (rows) against B = codes[sb:sb+lb] (columns).

    h_row (float64) and p_row (int64) are scratch rows of at least lb + 1 entries.
    Returns (cost, packed counts).
    """
    for j in range(lb + 1):
        h_row[j] = gap * j
        p_row[j] = START + j * LEN_ONE
    for i in range(1, la + 1):
        a = codes[sa + i - 1]
        subst_a = subst[a]
        last_row = i == la
        gap_row = 0.0 if last_row else 1.0
        inc_row = 0 if last_row else 1
        diag_h, diag_p = h_row[0], p_row[0]
        left_h = gap * i
        left_p = START + i * LEN_ONE
        h_row[0], p_row[0] = left_h, left_p
        move = UP  # column 0 holds UP moves
        prev_b = -1
        for j in range(1, lb):
            b = codes[sb + j - 1]
            up_h, up_p = h_row[j], p_row[j]
            left_h, left_p, move = cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p,
                                        up_h, up_p, subst_a, gap, homopolymer_gap, gap_row,
                                        1.0, inc_row, 1)
            h_row[j], p_row[j] = left_h, left_p
            diag_h, diag_p = up_h, up_p
            prev_b = b
        # last column: vertical gaps are free and not counted
        b = codes[sb + lb - 1]
        h, p, _ = cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p, h_row[lb],
                       p_row[lb], subst_a, gap, homopolymer_gap, gap_row, 0.0, inc_row, 0)
        h_row[lb], p_row[lb] = h, p
    return h_row[lb], p_row[lb]


@njit(parallel=True, nogil=True, cache=True)
def _align_batch(codes, offsets, pa, pb, subst, gap, homopolymer_gap, cost, packed, max_len,
                 chunk):
    n = pa.shape[0]
    nchunks = (n + chunk - 1) // chunk
    for c in prange(nchunks):
        h_row = np.empty(max_len + 1, dtype=np.float64)
        p_row = np.empty(max_len + 1, dtype=np.int64)
        for k in range(c * chunk, min(n, (c + 1) * chunk)):
            x, y = pa[k], pb[k]
            cost[k], packed[k] = align_pair(codes, offsets[x], offsets[x + 1] - offsets[x],
                                            offsets[y], offsets[y + 1] - offsets[y], subst,
                                            gap, homopolymer_gap, h_row, p_row)


def aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist kernel: (pa, pb) -> cost (float64) and length, matches,
    aligned, leading (int32) of the pairs (pa[k] as A, pb[k] as B), indices into offsets."""
    return pair_kernel(codes, offsets, threads, _align_batch,
                       (scheme.matrix(), scheme.gap, scheme.homopolymer_gap),
                       (np.float64, np.int64), lambda cost, packed: (cost, *unpack(packed)))
