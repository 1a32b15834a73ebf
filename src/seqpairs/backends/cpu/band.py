"""Numba CPU kernel of the banded SeqDist alignment with a certificate (docs/pruning.md).

Only the cells of a band |j - i| <= width, the last row and the last column are computed.
Each carries, beside the full kernel's cost, counts and move, whether it is *exact* (the
same cost, counts and move as the full matrix's cell) and otherwise a lower bound on the
full matrix's cost there; every cell also carries an upper bound and the moves it may
have (which decide the gap cost of its right neighbour). A cell outside the set is
inexact with any move and a lower bound: the lower band's (the recurrence with every
paid gap at the cheapest cost, over a wider band) where it is given, else cheapest_gap *
|i - j| (any path to it makes that many gap moves, none of them free). A cell is exact
when every move that SeqDist's rule may pick, given the candidates' bounds, comes from
an exact neighbour with a known gap cost: the rule then picks among them what the full
matrix picks. When the last cell is exact, cost and counts are the full kernel's, bit
for bit.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ...scoring.seqdist import LOWER_UNITS
from ..alignments import DIAG, LEFT, UP
from ..common import unpack
from .batch import pair_kernel
from .seqdist import LEN_ONE, START, _diag_step

INF = math.inf
ANY_MOVE = (1 << DIAG) | (1 << LEFT) | (1 << UP)


@njit(inline="always")
def _lower_units(lw, r, i, j, lower, border_gap, least_gap):
    """The lower band's bound at cell (i, j) in units: its value within half-width
    `lower` (row buffer r), the borders' (border_gap a letter), else least_gap per
    diagonal away."""
    if i == 0:
        return border_gap * j
    if j == 0:
        return border_gap * i
    if abs(j - i) <= lower:
        return lw[r, j]
    return least_gap * abs(i - j)


@njit(inline="always")
def _lower(lw, r, i, j, lower, gap_bound):
    """The bound the band takes at an outside cell (i, j) (0 < i < la, 0 < j < lb): the
    lower band's within half-width `lower`, else gap_bound per diagonal away."""
    if abs(j - i) <= lower:
        return lw[r, j] / LOWER_UNITS
    return gap_bound * abs(i - j)


@njit(inline="always")
def _neighbour(h, x, p, m, u, lw, r, i, j, la, lb, width, lower, gap, gap_bound):
    """Cell (i, j) from row buffer r when it was computed, else out of band (the lower
    band's bound, any move)."""
    if i == 0 or j == 0 or i == la or j == lb or abs(j - i) <= width:
        return h[r, j], x[r, j], p[r, j], m[r, j], u[r, j]
    return (_lower(lw, r, i, j, lower, gap_bound), False, np.int64(0), np.int8(ANY_MOVE),
            INF)


@njit(inline="always")
def _cell(a, b, prev_b, subst_a, gap, homopolymer_gap, gap_row, gap_col, inc_row, inc_col,
          dh, dx, dp, du, lh, lx, lp, lm, lu, uh, ux, up, uu):
    """One cell: (cost or lower bound, exact, counts, the moves it may have, upper bound).
    lm: the left cell's possible moves, which decide the gap cost here."""
    eq_a = b == a
    same_b = b == prev_b
    # the gap cost each move of the left cell gives (docs/seqdist.md, last(i, j - 1))
    may_up, may_left = (lm >> UP) & 1 == 1, (lm >> LEFT) & 1 == 1
    may_diag = (lm >> DIAG) & 1 == 1
    homopolymer = ((may_up and eq_a) or (may_left and same_b)
                   or (may_diag and eq_a and same_b))
    plain = ((may_up and not eq_a) or (may_left and not same_b)
             or (may_diag and not (eq_a and same_b)))
    if homopolymer and plain:  # either gap cost is possible
        g_lo, g_hi = min(gap, homopolymer_gap), max(gap, homopolymer_gap)
    else:
        g_lo = g_hi = homopolymer_gap if homopolymer else gap
    g_known = g_lo == g_hi
    c1 = dh + subst_a[b]
    c2 = lh + g_lo * gap_row
    c3 = uh + g_lo * gap_col
    e1 = dx
    e2 = lx and (g_known or gap_row == 0.0)
    e3 = ux and (g_known or gap_col == 0.0)
    u1 = du + subst_a[b]
    u2 = lu + g_hi * gap_row
    u3 = uu + g_hi * gap_col
    upper = min(u1, u2, u3)
    if not (e1 and e2 and e3):
        # the moves SeqDist's rule may pick given the candidates' bounds (lower c, upper u)
        p1 = c1 < u2 and c1 < u3
        p2 = c2 <= u1 and c2 < u3
        p3 = c3 <= u1 and c3 <= u2
        if (p1 and not e1) or (p2 and not e2) or (p3 and not e3):
            moves = (int(p1) << DIAG) | (int(p2) << LEFT) | (int(p3) << UP)
            return min(c1, c2, c3), False, np.int64(0), np.int8(moves), upper
        # every move it may pick is exact: the others are never chosen
        c1 = c1 if p1 else INF
        c2 = c2 if p2 else INF
        c3 = c3 if p3 else INF
    if c1 < c2:
        if c1 < c3:
            return c1, True, _diag_step(dp, eq_a), np.int8(1 << DIAG), c1
        return c3, True, up + inc_col, np.int8(1 << UP), c3
    if c2 < c3:
        return c2, True, lp + inc_row, np.int8(1 << LEFT), c2
    return c3, True, up + inc_col, np.int8(1 << UP), c3


@njit(nogil=True, cache=True)
def band_pair(codes, sa, la, sb, lb, subst, gap, homopolymer_gap, gap_bound, width, lower,
              lower_subst, lower_gaps, h, x, p, m, u, lw):
    """Banded SeqDist alignment of A = codes[sa:sa+la] (rows) against B = codes[sb:sb+lb].

    gap_bound: the scheme's cheapest_gap_shrunk. lower: the half-width of the lower band
    whose bounds the cells outside the band take (<= width: none), with lower_subst and
    lower_gaps its weights (lower_weights). h, u (float64), lw (int64), x (bool), p
    (int64), m (int8: the moves as bits 1 << DIAG, LEFT, UP): scratch of shape (2, >= lb +
    1).
    Returns (exact, cost, packed counts, upper): with exact, cost and counts are the full
    kernel's; otherwise cost is a lower bound on the full kernel's cost; upper is always
    an upper bound on it.
    """
    # the lower band's weights in units, rounded down (lower_weights)
    border_gap, least_gap = lower_gaps
    for j in range(lb + 1):
        h[0, j] = u[0, j] = gap * j
        x[0, j] = True
        p[0, j] = START + j * LEN_ONE
        m[0, j] = 1 << LEFT
    for i in range(1, la + 1):
        cur, prv = i & 1, 1 - (i & 1)
        a = codes[sa + i - 1]
        subst_a = subst[a]
        last_row = i == la
        if not last_row and lower > width:  # the lower band's row: paid gaps at their cheapest
            subst_lo = lower_subst[a]
            for j in range(max(1, i - lower), min(lb - 1, i + lower) + 1):
                lw[cur, j] = min(
                    _lower_units(lw, prv, i - 1, j - 1, lower, border_gap, least_gap)
                    + subst_lo[codes[sb + j - 1]],
                    _lower_units(lw, cur, i, j - 1, lower, border_gap, least_gap) + least_gap,
                    _lower_units(lw, prv, i - 1, j, lower, border_gap, least_gap) + least_gap)
        gap_row = 0.0 if last_row else 1.0
        inc_row = 0 if last_row else 1
        h[cur, 0] = u[cur, 0] = gap * i
        x[cur, 0] = True
        p[cur, 0] = START + i * LEN_ONE
        m[cur, 0] = 1 << UP
        # the band's columns before the last, then the last column (the last row: all)
        lo, hi = (1, lb - 1) if last_row else (max(1, i - width), min(lb - 1, i + width))
        cells = max(0, hi - lo + 1) + 1
        for k in range(cells):
            j = lo + k if k < cells - 1 else lb
            b = codes[sb + j - 1]
            prev_b = codes[sb + j - 2] if j > 1 else -1
            last_col = j == lb
            dh, dx, dp, _, du = _neighbour(h, x, p, m, u, lw, prv, i - 1, j - 1, la, lb, width,
                                           lower, gap, gap_bound)
            lh, lx, lp, lm, lu = _neighbour(h, x, p, m, u, lw, cur, i, j - 1, la, lb, width,
                                            lower, gap, gap_bound)
            uh, ux, up, _, uu = _neighbour(h, x, p, m, u, lw, prv, i - 1, j, la, lb, width,
                                           lower, gap, gap_bound)
            h[cur, j], x[cur, j], p[cur, j], m[cur, j], u[cur, j] = _cell(
                a, b, prev_b, subst_a, gap, homopolymer_gap, gap_row,
                0.0 if last_col else 1.0, inc_row, 0 if last_col else 1,
                dh, dx, dp, du, lh, lx, lp, lm, lu, uh, ux, up, uu)
    r = la & 1
    return x[r, lb], h[r, lb], p[r, lb], u[r, lb]


@njit(parallel=True, nogil=True, cache=True)
def _band_batch(codes, offsets, pa, pb, subst, gap, homopolymer_gap, gap_bound, width, lower,
                lower_subst, lower_gaps, exact, cost, packed, upper, max_len, chunk):
    n = pa.shape[0]
    nchunks = (n + chunk - 1) // chunk
    for c in prange(nchunks):
        h = np.empty((2, max_len + 1), dtype=np.float64)
        u = np.empty((2, max_len + 1), dtype=np.float64)
        x = np.empty((2, max_len + 1), dtype=np.bool_)
        p = np.empty((2, max_len + 1), dtype=np.int64)
        m = np.empty((2, max_len + 1), dtype=np.int8)
        lw = np.empty((2, max_len + 1), dtype=np.int64)
        for k in range(c * chunk, min(n, (c + 1) * chunk)):
            s, t = pa[k], pb[k]
            exact[k], cost[k], packed[k], upper[k] = band_pair(
                codes, offsets[s], offsets[s + 1] - offsets[s], offsets[t],
                offsets[t + 1] - offsets[t], subst, gap, homopolymer_gap, gap_bound, width,
                lower, lower_subst, lower_gaps, h, x, p, m, u, lw)


def aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist_band kernel: (pa, pb, width, lower=0) -> exact (bool), cost
    (float64: the full kernel's where exact, else a lower bound), length, matches, aligned,
    leading (int32, the full kernel's where exact) and upper (float64, an upper bound on
    the cost)."""

    lower_subst, lower_gaps = scheme.lower_weights
    lower_subst = np.array(lower_subst, dtype=np.int64)

    def align(pa, pb, width, lower=0):
        return pair_kernel(codes, offsets, threads, _band_batch,
                           (scheme.matrix(), scheme.gap, scheme.homopolymer_gap,
                            scheme.cheapest_gap_shrunk, width, lower, lower_subst,
                            lower_gaps),
                           (np.bool_, np.float64, np.int64, np.float64),
                           lambda exact, cost, packed, upper: (exact, cost, *unpack(packed),
                                                                upper))(pa, pb)

    return align


@njit(inline="always")
def _upper_of(u, r, i, j, la, lb, width):
    """Upper bound at cell (i, j) from row buffer r: infinite outside the computed set."""
    if i == 0 or j == 0 or i == la or j == lb or abs(j - i) <= width:
        return u[r, j]
    return INF


@njit(nogil=True, cache=True)
def upper_pair(codes, sa, la, sb, lb, subst, gap, dearest_gap, width, u):
    """An upper bound on the SeqDist cost of A = codes[sa:sa+la] against B: the cheapest
    path through the band, the last row and the last column with every paid gap at
    dearest_gap (docs/pruning.md, section 2). u: float64 scratch (2, >= lb + 1).

    The band's cells read their neighbours without a test: the cells just outside it
    that they read hold INF (the one left of a row's band, the one right of the row
    above's), and before the last row, which reads every column of the row above, that
    row's cells outside the band do. Each cell is the minimum of the same three sums as
    the cell-by-cell definition (tests/test_prune.py: plain_upper), so the same bits."""
    for j in range(lb + 1):
        u[0, j] = gap * j
    if lb == 0:
        return gap * la  # column 0, exact
    for i in range(1, la):
        cur, prv = i & 1, 1 - (i & 1)
        subst_a = subst[codes[sa + i - 1]]
        u[cur, 0] = gap * i
        lo, hi = max(1, i - width), min(lb - 1, i + width)
        if 1 <= lo - 1 <= lb - 1:
            u[cur, lo - 1] = INF
        left = u[cur, lo - 1]
        for j in range(lo, hi + 1):
            left = min(u[prv, j - 1] + subst_a[codes[sb + j - 1]], left + dearest_gap,
                       u[prv, j] + dearest_gap)
            u[cur, j] = left
        if hi + 1 <= lb - 1:
            u[cur, hi + 1] = INF
        # the last column: its vertical moves are free
        u[cur, lb] = min(_upper_of(u, prv, i - 1, lb - 1, la, lb, width)
                         + subst_a[codes[sb + lb - 1]],
                         _upper_of(u, cur, i, lb - 1, la, lb, width) + dearest_gap,
                         u[prv, lb] + dearest_gap * 0.0)
    # the last row, every column: its horizontal moves are free
    i = la
    cur, prv = i & 1, 1 - (i & 1)
    if i > 1:
        for j in range(1, lb):
            if abs(j - (i - 1)) > width:
                u[prv, j] = INF
    subst_a = subst[codes[sa + i - 1]]
    u[cur, 0] = gap * i
    for j in range(1, lb + 1):
        gap_col = 0.0 if j == lb else 1.0
        u[cur, j] = min(u[prv, j - 1] + subst_a[codes[sb + j - 1]],
                        u[cur, j - 1] + dearest_gap * 0.0, u[prv, j] + dearest_gap * gap_col)
    return u[cur, lb]


@njit(parallel=True, nogil=True, cache=True)
def _upper_batch(codes, offsets, pa, pb, subst, gap, dearest_gap, width, upper, max_len,
                 chunk):
    n = pa.shape[0]
    for c in prange((n + chunk - 1) // chunk):
        u = np.empty((2, max_len + 1), dtype=np.float64)
        for k in range(c * chunk, min(n, (c + 1) * chunk)):
            s, t = pa[k], pb[k]
            upper[k] = upper_pair(codes, offsets[s], offsets[s + 1] - offsets[s], offsets[t],
                                  offsets[t + 1] - offsets[t], subst, gap, dearest_gap,
                                  width, u)


def upper(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist_upper kernel: (pa, pb, width) -> upper (float64), an upper
    bound on each pair's cost."""

    def bound(pa, pb, width):
        return pair_kernel(codes, offsets, threads, _upper_batch,
                           (scheme.matrix(), scheme.gap, scheme.dearest_gap, width),
                           (np.float64,), lambda values: values)(pa, pb)

    return bound
