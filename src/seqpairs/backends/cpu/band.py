"""Numba CPU kernel of the banded SeqDist alignment with a certificate (docs/pruning.md).

Only the cells of a band |j - i| <= width, the last row and the last column are computed.
Each carries, beside the full kernel's cost, counts and move, whether it is *exact* (the
same cost, counts and move as the full matrix's cell) and otherwise a lower bound on the
full matrix's cost there; every cell also carries an upper bound and the moves it may
have (which decide the gap cost of its right neighbour). A cell outside the set is
inexact with any move and a lower bound: the lower band's (the recurrence with every
paid gap at the least cost it can have there, over a wider band) where it is given, else
cheapest_gap * |i - j| (any path to it makes that many gap moves, none of them free). A
cell is exact when every move that SeqDist's rule may pick, given the candidates'
bounds, comes from an exact neighbour with a known gap cost: the rule then picks among
them what the full matrix picks. When the last cell is exact, cost and counts are the
full kernel's, bit for bit.

Pairs go through in groups of LANES with A of one length, in lockstep (as the full
kernel, backends/cpu/seqdist.py, and the upper bounds below): the group's lower band
first (_lower_group), then its band row by row (_band_row). Every lane loop is
branch-free (each cell computes every candidate and selects), and the band's reads and
writes few arrays, each field at a constant offset (a row's fields in one array by
slot, the left cell's and the last column's in one by lane): with one array a field
LLVM gave up vectorising it ("too many memory checks needed"), and the cell ran 4x
slower."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...scoring.seqdist import LOWER_UNITS
from ..alignments import DIAG, LEFT, UP
from ..common import EDGES, check_lengths, unpack
from .batch import in_parallel
from .seqdist import LANES, LEN_ONE, START, _diag_step

INF = math.inf
ANY_MOVE = (1 << DIAG) | (1 << LEFT) | (1 << UP)
I0, I1 = np.int64(0), np.int64(1)
UNIT = 1.0 / LOWER_UNITS  # the lower band's unit


@njit(inline="always")
def _gap_kinds(lm, eq_a, same_b):
    """Whether some move the left cell may have (lm) gives the moves here the homopolymer
    gap, and whether some gives the plain one (docs/seqdist.md, last(i, j - 1)): UP when
    B[j-1] = A[i-1], LEFT when B[j-1] = B[j-2], DIAG when both."""
    may_up, may_left = (lm >> UP) & 1 == 1, (lm >> LEFT) & 1 == 1
    may_diag = (lm >> DIAG) & 1 == 1
    homopolymer = (may_up & eq_a) | (may_left & same_b) | (may_diag & eq_a & same_b)
    plain = ((may_up & (not eq_a)) | (may_left & (not same_b))
             | (may_diag & (not (eq_a & same_b))))
    return homopolymer, plain


@njit(inline="always")
def _cell(a, b, prev_b, sub, gap, homopolymer_gap, gap_row, gap_col, inc_row, inc_col,
          dh, dx, dp, du, lh, lx, lp, lm, lu, uh, ux, up, uu):
    """One cell: (cost or lower bound, exact (0/1), counts, the moves it may have, upper
    bound), every value computed and the result selected (no branch, so that LLVM
    vectorises the band's lane loop). lm: the left cell's possible moves, which decide
    the gap cost here."""
    eq_a = b == a
    homopolymer, plain = _gap_kinds(lm, eq_a, b == prev_b)
    either = homopolymer & plain  # either gap cost is possible
    one = homopolymer_gap if homopolymer else gap
    g_lo = min(gap, homopolymer_gap) if either else one
    g_hi = max(gap, homopolymer_gap) if either else one
    g_known = g_lo == g_hi
    c1 = dh + sub
    c2 = lh + g_lo * gap_row
    c3 = uh + g_lo * gap_col
    e1 = dx == 1
    e2 = (lx == 1) & (g_known | (gap_row == 0.0))
    e3 = (ux == 1) & (g_known | (gap_col == 0.0))
    u1 = du + sub
    u2 = lu + g_hi * gap_row
    u3 = uu + g_hi * gap_col
    all_exact = e1 & e2 & e3
    # the moves SeqDist's rule may pick given the candidates' bounds (lower c, upper u)
    p1 = (c1 < u2) & (c1 < u3)
    p2 = (c2 <= u1) & (c2 < u3)
    p3 = (c3 <= u1) & (c3 <= u2)
    inexact = (not all_exact) & ((p1 & (not e1)) | (p2 & (not e2)) | (p3 & (not e3)))
    # otherwise every move it may pick is exact, and the others are never chosen
    k1 = c1 if all_exact | p1 else INF
    k2 = c2 if all_exact | p2 else INF
    k3 = c3 if all_exact | p3 else INF
    diag = (k1 < k2) & (k1 < k3)
    left = (not (k1 < k2)) & (k2 < k3)
    value = k1 if diag else (k2 if left else k3)
    counts = _diag_step(dp, eq_a) if diag else (lp + inc_row if left else up + inc_col)
    move = np.int64(1 << DIAG) if diag else np.int64(1 << LEFT if left else 1 << UP)
    moves = (np.int64(p1) << DIAG) | (np.int64(p2) << LEFT) | (np.int64(p3) << UP)
    if_inexact = (min(c1, min(c2, c3)), np.int64(0), np.int64(0), moves,
                  min(u1, min(u2, u3)))
    return (if_inexact[0] if inexact else value, if_inexact[1] if inexact else np.int64(1),
            if_inexact[2] if inexact else counts, if_inexact[3] if inexact else move,
            if_inexact[4] if inexact else value)


@njit(inline="always")
def _letters(codes, offsets, pa, pb, At, Bt, lb, sa, sb, none):
    """A group's lanes (LANES pairs; fewer repeat the last): starts and B's lengths in sa,
    sb, lb, and the letters transposed, a row of lanes at a time: At[i * LANES + lane] =
    A[i], Bt[j * LANES + lane] = B[j - 1] (row 0: `none`; past a pair's end its last
    letter, never used). Returns A's length (every lane's) and the longest B."""
    n = len(pa)
    for k in range(LANES):
        x, y = pa[min(k, n - 1)], pb[min(k, n - 1)]
        sa[k], sb[k], lb[k] = offsets[x], offsets[y], offsets[y + 1] - offsets[y]
    la, cols = offsets[pa[0] + 1] - offsets[pa[0]], lb.max()
    for i in range(la):
        for k in range(LANES):
            At[i * LANES + k] = codes[sa[k] + i]
    Bt[:LANES] = none
    for j in range(cols):
        for k in range(LANES):
            Bt[(j + 1) * LANES + k] = codes[sb[k] + max(min(j, lb[k] - 1), 0)]
    return la, cols


@njit(nogil=True, boundscheck=False, cache=True)
def _lower_group(la, cols, lb, At, Bt, lower_subst, plain_gap, least_gap, width, lower,
                 edges, lower_last, low, lanes, Bf):
    """The lower band (docs/pruning.md, section 2) of a group's LANES pairs (_letters'
    la, cols, lb, At, Bt; Bt's row 0 none), in lockstep as _upper_group (every lane loop
    branch-free): rows 1 .. la - 1 in integer units (lower_weights) held in float32
    (exact_lower: every sum exact), slot s = j - i + lower [s * LANES + lane], the rows in
    two buffers by parity, by increasing s. Writes what _band_group reads of it, as
    gpu_kernels/band.cu's seqdist_lower: per row i, [(i * EDGES + e) * LANES + lane] the
    cells (i, i - width - 1), (i, i + width + 1) and (i, lb - 1), and row la - 1's slots
    [s * LANES + lane]. Scratch: low, lanes and Bf (float32, as the cells: LLVM then
    runs 16 lanes at once)."""
    slots = 2 * lower + 1
    a_row, s0, s1, s2, s3, lbf = lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5]
    for j in range(cols + 1):
        for k in range(LANES):
            Bf[j * LANES + k] = Bt[j * LANES + k]
    for k in range(LANES):
        lbf[k] = lb[k]
    for t in range(slots):
        for k in range(LANES):
            low[0, t * LANES + k] = plain_gap * np.float32(max(t - lower, 0))
    beyond = least_gap * np.float32(lower + 1)  # a cell just outside the lower band
    for i in range(1, la):
        above, row = low[(i - 1) & 1], low[i & 1]  # no lane loop writes where it reads
        for k in range(LANES):
            letter = At[(i - 1) * LANES + k]
            s0[k], s1[k], s2[k], s3[k] = (lower_subst[letter, 0], lower_subst[letter, 1],
                                          lower_subst[letter, 2], lower_subst[letter, 3])
            a_row[k] = letter  # A[i - 1], for the gap test
        # (i, i - lower - 1)
        first_left = plain_gap * np.float32(i) if i - lower - 1 == 0 else beyond
        for t in range(slots):
            j = i + t - lower
            letters = np.uint64(min(max(j, 0), cols) * LANES)
            before = np.uint64(min(max(j - 1, 0), cols) * LANES)
            here, next_slot = np.uint64(t * LANES), np.uint64(min(t + 1, slots - 1) * LANES)
            prev_slot = np.uint64(max(t - 1, 0) * LANES)
            up_outside = plain_gap * np.float32(j) if i == 1 else beyond
            row_start = plain_gap * np.float32(i)
            column = np.float32(j)
            last_slot, first_slot = t == slots - 1, t == 0
            for k in range(LANES):
                lane = np.uint64(k)
                # every load unconditional, selects after (so that LLVM vectorises)
                b, b_before, a = Bf[letters + lane], Bf[before + lane], a_row[lane]
                old, over, beside, lbk = (above[here + lane], above[next_slot + lane],
                                          row[prev_slot + lane], lbf[lane])
                sub = _substitution(b, s0[lane], s1[lane], s2[lane], s3[lane])
                # a gap extends a homopolymer only if B[j-1] is A[i-1] or B[j-2]
                gap = least_gap if (b == a) | (b == b_before) else plain_gap
                over = up_outside if last_slot else over
                beside = first_left if first_slot else beside
                value = _least(_least(old + sub, over + gap), beside + gap)
                within = (column > np.float32(0)) & (column < lbk)
                row[here + lane] = row_start if j == 0 else (value if within else old)
        for k in range(LANES):
            edge = i * EDGES * LANES + k
            edges[edge] = row[(lower - width - 1) * LANES + k]
            edges[edge + LANES] = row[(lower + width + 1) * LANES + k]
            at = lb[k] - 1 - i + lower  # (i, lb - 1)'s slot, where the row holds it
            edges[edge + 2 * LANES] = row[min(max(at, 0), slots - 1) * LANES + k]
    final = low[(la - 1) & 1]
    for t in range(slots):
        for k in range(LANES):
            lower_last[t * LANES + k] = final[t * LANES + k]


# A row's fields by slot, [(slot * FIELDS + field) * LANES + lane]: floats H (cost or lower
# bound) and U (upper bound), ints X (exact) and P (counts)
FIELDS = 2
H_, U_ = 0, 1
X_, P_ = 0, 1
# The lane arrays' fields, [field * LANES + lane]: the left cell's and the last column's
# latest cell's, floats H, U and ints X, M (its moves), P
LH, LU, TH, TU = 0, 1, 2, 3
LX, LM, LP, TX, TM, TP = 0, 1, 2, 3, 4, 5


@njit(inline="always")
def _slot(t, f, lane):
    return np.uint64((t * FIELDS + f) * LANES) + lane


@njit(inline="always")
def _ln(f, lane):
    return np.uint64(f * LANES) + lane


@njit(inline="always")
def _outside(bound):
    """A cell outside the computed set: its lower bound, inexact, any move."""
    return bound, I0, I0, np.int64(ANY_MOVE), INF


@njit(inline="always")
def _border(gap, n, move):
    """Row 0's cell (0, n) (LEFT) or column 0's (n, 0) (UP): exact, n gap columns."""
    return gap * n, I1, START + n * LEN_ONE, np.int64(1 << move), gap * n


@njit(inline="always")
def _exact_cell(a, b, prev_b, sub, gap, homopolymer_gap, inc_col, dh, dp, lh, lp, lm, uh, up):
    """_cell where its three neighbours are exact (lm: the left cell's one move): the full
    kernel's cell, exact; returns (cost, counts, move). The same bits as _cell there: its
    gap cost known, every candidate exact, the same selects (a row's cells, gap_row 1)."""
    eq_a = b == a
    g = homopolymer_gap if _gap_kinds(lm, eq_a, b == prev_b)[0] else gap
    c1 = dh + sub
    c2 = lh + g
    c3 = uh + (g if inc_col == 1 else 0.0)  # the product _cell takes, exact
    diag = (c1 < c2) & (c1 < c3)
    left = (not (c1 < c2)) & (c2 < c3)
    value = c1 if diag else (c2 if left else c3)
    counts = _diag_step(dp, eq_a) if diag else (lp + 1 if left else up + inc_col)
    move = np.int64(1 << DIAG) if diag else np.int64(1 << LEFT if left else 1 << UP)
    return value, counts, move


@njit(inline="always")
def _keep(t, lane, j, lb_k, column_0, gap, i, ch, cx, cp, cm, cu, CF, CI, LF, LI):
    """A band cell into the row (CF/CI slot t) and the left cell (LF/LI), column 0's border
    instead where j is 0, and into the last column's latest cell (T*) where j is lb."""
    bh, bx, bp, bm, bu = _border(gap, i, UP)  # column 0
    ch, cx, cp = (bh if column_0 else ch, bx if column_0 else cx, bp if column_0 else cp)
    cm, cu = bm if column_0 else cm, bu if column_0 else cu
    CF[_slot(t, H_, lane)], CF[_slot(t, U_, lane)] = ch, cu
    CI[_slot(t, X_, lane)], CI[_slot(t, P_, lane)] = cx, cp
    LF[_ln(LH, lane)], LF[_ln(LU, lane)] = ch, cu
    LI[_ln(LX, lane)], LI[_ln(LM, lane)], LI[_ln(LP, lane)] = cx, cm, cp
    end = (j >= 1) & (j == lb_k)  # the last column's cell
    LF[_ln(TH, lane)] = ch if end else LF[_ln(TH, lane)]
    LF[_ln(TU, lane)] = cu if end else LF[_ln(TU, lane)]
    LI[_ln(TX, lane)] = cx if end else LI[_ln(TX, lane)]
    LI[_ln(TM, lane)] = cm if end else LI[_ln(TM, lane)]
    LI[_ln(TP, lane)] = cp if end else LI[_ln(TP, lane)]


@njit(nogil=True, boundscheck=False, cache=True)
def _band_row(i, width, cols, lb, Bt, gap, hgap, a_row, S, PF, PI, CF, CI, LF, LI):
    """Row i of the band into CF/CI from the row above, PF/PI (whose slot 2 width + 1 holds
    the cell above the last slot); the left cell in LF/LI's L* fields, the last column's
    latest cell in their T* fields; a_row: A's letter a lane, S[letter * LANES + lane]: its
    substitution cost against each letter. A slot whose every lane has three exact
    neighbours (on C005's band pairs, 47% of them) takes _exact_cell, without _cell's
    bounds."""
    slots = 2 * width + 1
    for t in range(slots):
        j = i + t - width
        letters = np.uint64(min(max(j, 0), cols) * LANES)
        before = np.uint64(min(max(j - 1, 0), cols) * LANES)
        column_0 = j == 0
        exact_around = I1
        for k in range(LANES):
            lane = np.uint64(k)
            exact_around &= (PI[_slot(t, X_, lane)] & PI[_slot(t + 1, X_, lane)]
                             & LI[_ln(LX, lane)])
        if exact_around == 1:
            for k in range(LANES):
                lane = np.uint64(k)
                a, b, prev_b = a_row[lane], Bt[letters + lane], Bt[before + lane]
                sub = _substitution(b, S[_ln(0, lane)], S[_ln(1, lane)], S[_ln(2, lane)],
                                    S[_ln(3, lane)])
                inc_col = 0 if j == lb[lane] else 1
                ch, cp, cm = _exact_cell(
                    a, b, prev_b, sub, gap, hgap, inc_col, PF[_slot(t, H_, lane)],
                    PI[_slot(t, P_, lane)], LF[_ln(LH, lane)], LI[_ln(LP, lane)],
                    LI[_ln(LM, lane)], PF[_slot(t + 1, H_, lane)], PI[_slot(t + 1, P_, lane)])
                _keep(t, lane, j, lb[lane], column_0, gap, i, ch, I1, cp, cm, ch, CF, CI, LF,
                      LI)
            continue
        for k in range(LANES):
            lane = np.uint64(k)
            a, b, prev_b = a_row[lane], Bt[letters + lane], Bt[before + lane]
            sub = _substitution(b, S[_ln(0, lane)], S[_ln(1, lane)], S[_ln(2, lane)],
                                S[_ln(3, lane)])
            at_lb = j == lb[lane]
            dh, du = PF[_slot(t, H_, lane)], PF[_slot(t, U_, lane)]
            dx, dp = PI[_slot(t, X_, lane)], PI[_slot(t, P_, lane)]
            uh, uu = PF[_slot(t + 1, H_, lane)], PF[_slot(t + 1, U_, lane)]
            ux, up = PI[_slot(t + 1, X_, lane)], PI[_slot(t + 1, P_, lane)]
            lh, lu = LF[_ln(LH, lane)], LF[_ln(LU, lane)]
            lx, lm, lp = LI[_ln(LX, lane)], LI[_ln(LM, lane)], LI[_ln(LP, lane)]
            ch, cx, cp, cm, cu = _cell(a, b, prev_b, sub, gap, hgap, 1.0,
                                       0.0 if at_lb else 1.0, 1, 0 if at_lb else 1,
                                       dh, dx, dp, du, lh, lx, lp, lm, lu, uh, ux, up, uu)
            _keep(t, lane, j, lb[lane], column_0, gap, i, ch, cx, cp, cm, cu, CF, CI, LF, LI)


@njit(nogil=True, boundscheck=False, cache=True)
def _last_column(i, width, lower, with_lower, gap_bound, lb, B_last, gap, hgap, a_row, S, CF,
                 CI, LF, LI, edges):
    """Row i's cell (i, lb) where it lies outside the band, into LF/LI's T* fields (the
    last column's latest cell, which is the cell above); CF/CI: row i's band, LF/LI's LM:
    its last slot's moves; B_last: each lane's B[lb - 1] and B[lb - 2] [k], [LANES + k]
    (not read from Bt by lb: LLVM vectorises no loop that does); every lane computed,
    kept only where outside the band."""
    edge = i * EDGES * LANES
    last = 2 * width  # the band's last slot
    for k in range(LANES):
        lane = np.uint64(k)
        lbk = lb[lane]
        a, b, prev_b = a_row[lane], B_last[lane], B_last[np.uint64(LANES) + lane]
        sub = _substitution(b, S[_ln(0, lane)], S[_ln(1, lane)], S[_ln(2, lane)],
                            S[_ln(3, lane)])
        col_lower = with_lower & (lbk - 1 >= 1)
        # the diagonal (i - 1, lb - 1): row 0's, column 0's, or outside
        away = abs(lbk - i)
        bound = (edges[np.uint64(edge - EDGES * LANES + 2 * LANES) + lane] * UNIT
                 if col_lower & (away <= lower) else gap_bound * away)
        r0h, r0x, r0p, _, r0u = _border(gap, lbk - 1, LEFT)
        c0h, c0x, c0p, _, c0u = _border(gap, i - 1, UP)
        oh, ox, op, _, ou = _outside(bound)
        on_row_0, on_col_0 = i == 1, lbk - 1 == 0
        dh = r0h if on_row_0 else (c0h if on_col_0 else oh)
        dx = r0x if on_row_0 else (c0x if on_col_0 else ox)
        dp = r0p if on_row_0 else (c0p if on_col_0 else op)
        du = r0u if on_row_0 else (c0u if on_col_0 else ou)
        # the left cell (i, lb - 1): the band's last slot, column 0's, or outside
        away = abs(lbk - 1 - i)
        bound = (edges[np.uint64(edge + 2 * LANES) + lane] * UNIT
                 if col_lower & (away <= lower) else gap_bound * away)
        bh, bu = CF[_slot(last, H_, lane)], CF[_slot(last, U_, lane)]
        bx, bp = CI[_slot(last, X_, lane)], CI[_slot(last, P_, lane)]
        bm = LI[_ln(LM, lane)]
        ch, cx, cp, cm, cu = _border(gap, i, UP)
        oh, ox, op, om, ou = _outside(bound)
        in_slot = lbk - 1 - i == width
        lh = bh if in_slot else (ch if on_col_0 else oh)
        lx = bx if in_slot else (cx if on_col_0 else ox)
        lp = bp if in_slot else (cp if on_col_0 else op)
        lm = bm if in_slot else (cm if on_col_0 else om)
        lu = bu if in_slot else (cu if on_col_0 else ou)
        th, tu = LF[_ln(TH, lane)], LF[_ln(TU, lane)]
        tx, tm, tp = LI[_ln(TX, lane)], LI[_ln(TM, lane)], LI[_ln(TP, lane)]
        h, x, pk, m, u = _cell(a, b, prev_b, sub, gap, hgap, 1.0, 0.0, 1, 0, dh, dx, dp, du,
                               lh, lx, lp, lm, lu, th, tx, tp, tu)
        outside = abs(lbk - i) > width
        LF[_ln(TH, lane)], LF[_ln(TU, lane)] = (h if outside else th), (u if outside else tu)
        LI[_ln(TX, lane)] = x if outside else tx
        LI[_ln(TM, lane)] = m if outside else tm
        LI[_ln(TP, lane)] = pk if outside else tp


@njit(nogil=True, boundscheck=False, cache=True)
def _last_row(la, cols, width, lower, with_lower, gap_bound, lb, Bt, gap, hgap, a_row, S, HF,
              HI, LF, LI, DF, DI, lower_last):
    """Row la, every column (its horizontal moves free), column by column with the lanes
    in lockstep; each lane's cell (la, lb) is left in LF/LI's L* fields (the lanes past
    their lb keep it). HF/HI: row la - 1's band; LF/LI's T* fields: the last column's
    cell above; DF/DI: each lane's diagonal neighbour [field * LANES + lane] (H, U / X,
    P)."""
    lh, lx, lp, lm, lu = _border(gap, la, UP)
    dh, dx, dp, _, du = _border(gap, 0, LEFT) if la == 1 else _border(gap, la - 1, UP)
    for k in range(LANES):
        lane = np.uint64(k)
        LF[_ln(LH, lane)], LF[_ln(LU, lane)] = lh, lu
        LI[_ln(LX, lane)], LI[_ln(LM, lane)], LI[_ln(LP, lane)] = lx, lm, lp
        DF[_ln(0, lane)], DF[_ln(1, lane)], DI[_ln(0, lane)], DI[_ln(1, lane)] = dh, du, dx, dp
    for j in range(1, cols + 1):
        letters, before = np.uint64(j * LANES), np.uint64((j - 1) * LANES)
        o = j - (la - 1)
        # the cell above where not the last column's: row 0's, the band's, or outside
        t = min(max(o + width, 0), 2 * width)
        slot = np.uint64(min(max(o + lower, 0), 2 * max(lower, 0)) * LANES)
        on_row_0, in_band, use_lower = la == 1, abs(o) <= width, with_lower & (abs(o) <= lower)
        r0h, r0x, r0p, _, r0u = _border(gap, j, LEFT)
        for k in range(LANES):
            lane = np.uint64(k)
            lbk = lb[lane]
            b, prev_b = Bt[letters + lane], Bt[before + lane]
            sub = _substitution(b, S[_ln(0, lane)], S[_ln(1, lane)], S[_ln(2, lane)],
                                S[_ln(3, lane)])
            at_lb = j == lbk
            oh, ox, op, _, ou = _outside(
                lower_last[slot + lane] * UNIT if use_lower else gap_bound * abs(o))
            bh, bu = HF[_slot(t, H_, lane)], HF[_slot(t, U_, lane)]
            bx, bp = HI[_slot(t, X_, lane)], HI[_slot(t, P_, lane)]
            th, tu = LF[_ln(TH, lane)], LF[_ln(TU, lane)]
            tx, tp = LI[_ln(TX, lane)], LI[_ln(TP, lane)]
            uh = r0h if on_row_0 else (th if at_lb else (bh if in_band else oh))
            ux = r0x if on_row_0 else (tx if at_lb else (bx if in_band else ox))
            up = r0p if on_row_0 else (tp if at_lb else (bp if in_band else op))
            uu = r0u if on_row_0 else (tu if at_lb else (bu if in_band else ou))
            dh, du = DF[_ln(0, lane)], DF[_ln(1, lane)]
            dx, dp = DI[_ln(0, lane)], DI[_ln(1, lane)]
            lh, lu = LF[_ln(LH, lane)], LF[_ln(LU, lane)]
            lx, lm, lp = LI[_ln(LX, lane)], LI[_ln(LM, lane)], LI[_ln(LP, lane)]
            h, x, pk, m, u = _cell(a_row[lane], b, prev_b, sub, gap, hgap, 0.0,
                                   0.0 if at_lb else 1.0, 0, 0 if at_lb else 1,
                                   dh, dx, dp, du, lh, lx, lp, lm, lu, uh, ux, up, uu)
            live = j <= lbk  # a lane past its lb keeps its cell (la, lb)
            DF[_ln(0, lane)], DF[_ln(1, lane)] = (uh if live else dh), (uu if live else du)
            DI[_ln(0, lane)], DI[_ln(1, lane)] = (ux if live else dx), (up if live else dp)
            LF[_ln(LH, lane)], LF[_ln(LU, lane)] = (h if live else lh), (u if live else lu)
            LI[_ln(LX, lane)] = x if live else lx
            LI[_ln(LM, lane)] = m if live else lm
            LI[_ln(LP, lane)] = pk if live else lp


@njit(inline="always")
def _a_letters(At, row, subst, a_row, S):
    """A[row] of each lane into a_row, and its substitution costs against each letter
    into S [letter * LANES + lane]."""
    for k in range(LANES):
        lane = np.uint64(k)
        letter = At[row * LANES + k]
        a_row[k] = letter
        S[_ln(0, lane)], S[_ln(1, lane)], S[_ln(2, lane)], S[_ln(3, lane)] = (
            subst[letter, 0], subst[letter, 1], subst[letter, 2], subst[letter, 3])


@njit(nogil=True, boundscheck=False, cache=True)
def _band_group(la, cols, lb, At, Bt, subst, gap, hgap, gap_bound, width, lower, edges,
                lower_last, exact, cost, packed, upper):
    """The banded alignment with a certificate of a group's LANES pairs (_letters' la,
    cols, lb, At, Bt; Bt's row 0 none; the first len(exact) lanes written), in lockstep:
    rows 1 .. la - 1 through _band_row (the rows by parity in EF/EI and OF/OI), the last
    column's cells outside the band after each row (_last_column), then the last row
    (_last_row), each cell through _cell; the same bits as gpu_kernels/band.cu. A cell
    outside the computed set is _outside: the lower band's bound (edges and lower_last,
    _lower_group's, where lower > width), else gap_bound per diagonal away."""
    n = len(exact)
    slots = 2 * width + 1
    EF, OF = np.empty((slots + 1) * FIELDS * LANES), np.empty((slots + 1) * FIELDS * LANES)
    EI, OI = (np.empty((slots + 1) * FIELDS * LANES, np.int64),
              np.empty((slots + 1) * FIELDS * LANES, np.int64))
    LF, LI = np.empty(4 * LANES), np.empty(6 * LANES, np.int64)
    DF, DI = np.empty(2 * LANES), np.empty(2 * LANES, np.int64)  # the last row's diagonal
    a_row, S = np.empty(LANES, np.int64), np.empty(4 * LANES)
    B_last = np.empty(2 * LANES, np.int64)
    for k in range(LANES):
        B_last[k], B_last[LANES + k] = Bt[lb[k] * LANES + k], Bt[(lb[k] - 1) * LANES + k]
    for t in range(slots):  # row 0
        j = t - width
        for k in range(LANES):
            lane = np.uint64(k)
            h, x, pk, _, u = (_border(gap, j, LEFT) if 0 <= j <= lb[k] else _outside(INF))
            EF[_slot(t, H_, lane)], EF[_slot(t, U_, lane)] = h, u
            EI[_slot(t, X_, lane)], EI[_slot(t, P_, lane)] = x, pk
    for k in range(LANES):  # the last column's latest cell: (0, lb)
        lane = np.uint64(k)
        h, x, pk, m, u = _border(gap, lb[k], LEFT)
        LF[_ln(TH, lane)], LF[_ln(TU, lane)] = h, u
        LI[_ln(TX, lane)], LI[_ln(TM, lane)], LI[_ln(TP, lane)] = x, m, pk
    with_lower = lower > width
    beside_band = gap_bound * (width + 1)  # a cell just outside the band, no lower band
    HF, HI = EF, EI
    for i in range(1, la):
        edge = i * EDGES * LANES
        PF, PI = (EF, EI) if i & 1 else (OF, OI)
        CF, CI = (OF, OI) if i & 1 else (EF, EI)
        top = i + width
        _a_letters(At, i - 1, subst, a_row, S)
        for k in range(LANES):
            lane = np.uint64(k)
            # left of the band: column 0's cell or (i, i - width - 1), outside
            h, x, pk, m, u = (_border(gap, i, UP) if i - width - 1 == 0 else _outside(
                edges[edge + k] * UNIT if with_lower else beside_band))
            LF[_ln(LH, lane)], LF[_ln(LU, lane)] = h, u
            LI[_ln(LX, lane)], LI[_ln(LM, lane)], LI[_ln(LP, lane)] = x, m, pk
            # above the last slot: the last column's cell, row 0's or (i - 1, i + width)
            if top == lb[k]:
                h, u = LF[_ln(TH, lane)], LF[_ln(TU, lane)]
                x, pk = LI[_ln(TX, lane)], LI[_ln(TP, lane)]
            elif i == 1:
                h, x, pk, _, u = _border(gap, top, LEFT)
            else:
                h, x, pk, _, u = _outside(
                    edges[edge - EDGES * LANES + LANES + k] * UNIT if with_lower
                    else beside_band)
            PF[_slot(slots, H_, lane)], PF[_slot(slots, U_, lane)] = h, u
            PI[_slot(slots, X_, lane)], PI[_slot(slots, P_, lane)] = x, pk
        _band_row(i, width, cols, lb, Bt, gap, hgap, a_row, S, PF, PI, CF, CI, LF, LI)
        HF, HI = CF, CI
        _last_column(i, width, lower, with_lower, gap_bound, lb, B_last, gap, hgap, a_row, S,
                     CF, CI, LF, LI, edges)
    # the last row, every column: its horizontal moves are free
    _a_letters(At, la - 1, subst, a_row, S)
    _last_row(la, cols, width, lower, with_lower, gap_bound, lb, Bt, gap, hgap, a_row, S, HF,
              HI, LF, LI, DF, DI, lower_last)
    for k in range(n):
        lane = np.uint64(k)
        exact[k], cost[k] = LI[_ln(LX, lane)] == 1, LF[_ln(LH, lane)]
        packed[k], upper[k] = LI[_ln(LP, lane)], LF[_ln(LU, lane)]


@njit(inline="always")
def exact_lower(la, cols, dearest):
    """Whether float32 sums of integer units (the lower band's, the upper bounds') are
    exact for A of la letters and B of at most cols: each cell is at most the cost of a
    path to it, (la + cols) moves at most `dearest` units each, and every sum adds one
    move more, all below 2^24 (under SeqDist's costs: la + cols < 17,000; longer pairs go
    without a lower band, and their upper bounds in float64)."""
    return (la + cols + 1) * dearest < (1 << 24)


@njit(nogil=True, cache=True)
def _band_groups(first_group, stop_group, codes, offsets, pa, pb, subst, gap, hgap,
                 gap_bound, width, lower, lower_subst, lower_gaps, exact, cost, packed, upper,
                 starts, max_len):
    """_band_group over the groups pa[starts[g]:starts[g + 1]] of pairs with A of one
    length, g from first_group to stop_group - 1, each group's lower band first
    (_lower_group) where lower > width (edges: every row's, read without one too)."""
    plain_gap, least_gap = lower_gaps
    dearest = max(lower_subst.max(), plain_gap)
    slots = 2 * max(lower, 0) + 1
    At = np.empty(max_len * LANES, dtype=np.int64)
    Bt = np.empty((max_len + 1) * LANES, dtype=np.int64)
    lanes = np.empty((3, LANES), dtype=np.int64)
    edges = np.empty(max_len * EDGES * LANES, dtype=np.float32)
    lower_last = np.empty(slots * LANES, dtype=np.float32)
    low = np.empty((2, slots * LANES), dtype=np.float32)
    low_lanes = np.empty((6, LANES), dtype=np.float32)
    Bf = np.empty((max_len + 1) * LANES, dtype=np.float32)
    for g in range(first_group, stop_group):
        first, stop = starts[g], starts[g + 1]
        la, cols = _letters(codes, offsets, pa[first:stop], pb[first:stop], At, Bt, lanes[0],
                            lanes[1], lanes[2], -1)
        its_lower = lower if exact_lower(la, cols, dearest) else 0
        if its_lower > width:
            _lower_group(la, cols, lanes[0], At, Bt, lower_subst, plain_gap, least_gap, width,
                         its_lower, edges, lower_last, low, low_lanes, Bf)
        _band_group(la, cols, lanes[0], At, Bt, subst, gap, hgap, gap_bound, width, its_lower,
                    edges, lower_last, exact[first:stop], cost[first:stop], packed[first:stop],
                    upper[first:stop])


def aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist_band kernel: (pa, pb, width, lower=0) -> exact (bool), cost
    (float64: the full kernel's where exact, else a lower bound), length, matches, aligned,
    leading (int32, the full kernel's where exact) and upper (float64, an upper bound on
    the cost). Pairs go through it in groups of LANES with A of one length (their lower
    band in lockstep), sorted by length."""

    lower_subst, lower_gaps = scheme.lower_weights
    lower_subst = np.array(lower_subst, dtype=np.float32)
    lower_gaps = np.array(lower_gaps, dtype=np.float32)
    lengths = np.diff(offsets)

    def align(pa, pb, width, lower=0):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        outputs = [np.empty(len(pa), dtype=dtype)
                   for dtype in (np.bool_, np.float64, np.int64, np.float64)]
        if len(pa):
            order = np.lexsort((lengths[pb], lengths[pa]))
            sorted_outputs = [np.empty_like(o) for o in outputs]
            starts = lane_groups(lengths[pa[order]])
            in_parallel(_band_groups, len(starts) - 1, threads, codes, offsets, pa[order],
                        pb[order], scheme.matrix(), scheme.gap, scheme.homopolymer_gap,
                        scheme.cheapest_gap_shrunk, width, lower, lower_subst, lower_gaps,
                        *sorted_outputs, starts, check_lengths(offsets))
            for out, got in zip(outputs, sorted_outputs):
                out[order] = got
        exact, cost, packed, upper = outputs
        return (exact, cost, *unpack(packed), upper)

    return align


@njit(inline="always")
def _substitution(b, cost_0, cost_1, cost_2, cost_3):
    """The cost against letter b of the four loaded (selects, no load in a branch).
    seqdist._row writes the same select inline: through this helper its kernel ran 1.2x
    slower (RESULTS.md, "The CPU's upper bounds in lockstep")."""
    low = cost_0 if b == 0 else cost_1
    high = cost_2 if b == 2 else cost_3
    return low if b < 2 else high


@njit(inline="always")
def _least(a, b):
    """The smaller of two costs (never NaN): a compare and a select, which LLVM vectorises."""
    return b if b < a else a


@njit(nogil=True, boundscheck=False, cache=True)
def _upper_group(codes, offsets, pa, pb, subst, gaps, numbers, dear, inf, width, out, At, Bt,
                 Bv, even, odd, lanes, costs):
    """seqdist_upper of LANES pairs (pa, pb; fewer repeat the last) that share A's length
    la, in lockstep (backends/cpu/seqdist._row's way: every lane loop branch-free, so
    that LLVM vectorises it): an upper bound on the SeqDist cost, the cheapest path through
    the band |j - i| <= width, the last row and the last column with every paid gap at
    `dear`, the minimum of the same three sums as the cell-by-cell definition
    (tests/test_prune.py: plain_upper), so the same bits. Every value is of subst's dtype
    (float32 or float64, holding integer units: upper): gaps[n] the cost of n gaps of
    the plain gap (row and column 0), `inf` outside the band.

    A row's band is held by diagonal, slot t for j = i + t - width (t = 0 .. 2 width),
    [t * LANES + lane], in `even` or `odd` by the row's parity (so that no lane loop
    writes where it reads), `up` the cell above the band's last one; At and Bt hold the
    letters [i * LANES + lane] (Bt's row 0: none). A slot whose column is beyond B keeps
    its value, which nothing inside B reads; `last` is the last column's cell (i, lb),
    computed in the band or, outside it, from the two neighbours that can be finite.
    Scratch: At, Bt, even, odd, lanes and costs."""
    n = len(pa)
    slots = 2 * width + 1
    lb, sa, sb = lanes[0], lanes[1], lanes[2]
    s0, s1, s2, s3, last, left, up, lbv = (costs[0], costs[1], costs[2], costs[3], costs[4],
                                           costs[5], costs[6], costs[7])
    la, cols = _letters(codes, offsets, pa, pb, At, Bt, lb, sa, sb, 0)
    for j in range(cols + 1):  # B's letters and lengths as values too: the rows' lane
        for k in range(LANES):  # loops then hold one width of vector
            Bv[j * LANES + k] = Bt[j * LANES + k]
    for k in range(LANES):
        lbv[k] = lb[k]
    for t in range(slots):
        for k in range(LANES):
            j = t - width
            even[t * LANES + k] = gaps[max(j, 0)] if 0 <= j <= lb[k] else inf
    for k in range(LANES):
        last[k] = gaps[lb[k]]
    for i in range(1, la):
        for k in range(LANES):
            letter = At[(i - 1) * LANES + k]
            s0[k], s1[k], s2[k], s3[k] = (subst[letter, 0], subst[letter, 1],
                                          subst[letter, 2], subst[letter, 3])
            left[k] = gaps[i] if i - width - 1 == 0 else inf  # (i, i - width - 1)
            top = i + width  # (i - 1, i + width), above the band's last cell
            up[k] = last[k] if top == lb[k] else (gaps[top] if i == 1 else inf)
        if i & 1:
            _upper_row(i, width, cols, gaps, numbers, dear, inf, Bv, even, odd, lb, lbv, s0,
                       s1, s2, s3, left, up, last)
        else:
            _upper_row(i, width, cols, gaps, numbers, dear, inf, Bv, odd, even, lb, lbv, s0,
                       s1, s2, s3, left, up, last)
    # the last row, every column: its horizontal moves are free
    band = odd if (la - 1) & 1 else even
    free = gaps[0]  # no cost, of the values' dtype
    for k in range(LANES):
        letter = At[(la - 1) * LANES + k]
        s0[k], s1[k], s2[k], s3[k] = (subst[letter, 0], subst[letter, 1],
                                      subst[letter, 2], subst[letter, 3])
        left[k] = gaps[la]
        up[k] = free if la == 1 else gaps[la - 1]  # (la - 1, 0)
    for j in range(1, cols + 1):
        o = j - (la - 1)
        inside = -width <= o <= width
        slot = np.uint64((o + width) * LANES if inside else 0)
        for k in range(LANES):
            lane = np.uint64(k)
            lbk = lb[lane]
            b = Bt[np.uint64(j * LANES) + lane]
            sub = _substitution(b, s0[lane], s1[lane], s2[lane], s3[lane])
            cell, end, diag, beside = band[slot + lane], last[lane], up[lane], left[lane]
            cell = cell if inside else inf
            cell = gaps[j] if la == 1 else (end if j == lbk else cell)
            at_end = j == lbk
            value = _least(_least(diag + sub, beside + free),
                           cell + (free if at_end else dear))
            within = j <= lbk
            left[lane] = value if within else beside
            up[lane] = cell if within else diag
    for k in range(min(n, LANES)):
        out[k] = left[k]


@njit(nogil=True, boundscheck=False, cache=True)
def _upper_row(i, width, cols, gaps, numbers, dear, inf, Bv, above, band, lb, lbv, s0, s1,
               s2, s3, left, up, last):
    """Row i (1 .. la - 1) of _upper_group's band into `band` from the row `above`, every
    lane; `left` holds the cell left of the band on entry, then of each slot in turn, `up`
    the cell above the band's last one."""
    free = gaps[0]
    for t in range(2 * width + 1):
        j = i + t - width
        letters = np.uint64(min(max(j, 0), cols) * LANES)
        here, next_slot = np.uint64(t * LANES), np.uint64(min(t + 1, 2 * width) * LANES)
        last_slot = t == 2 * width
        column, positive = numbers[max(j, 0)], j > 0  # j as a value, for the lanes' tests
        for k in range(LANES):
            lane = np.uint64(k)
            lbk = lbv[lane]
            b = Bv[letters + lane]
            sub = _substitution(b, s0[lane], s1[lane], s2[lane], s3[lane])
            diag = above[here + lane]
            # every load is unconditional (selects after), so that LLVM if-converts
            beside, over, corner, before = (left[lane], above[next_slot + lane], up[lane],
                                            last[lane])
            over = corner if last_slot else over
            at_end = column == lbk
            value = _least(_least(diag + sub, beside + dear),
                           over + (free if at_end else dear))
            within = positive & (column <= lbk)
            cell = gaps[i] if j == 0 else (value if within else diag)
            band[here + lane] = cell
            left[lane] = cell
            last[lane] = value if at_end else before
    end = np.uint64(2 * width * LANES)
    for k in range(LANES):  # the last column outside the band: (i, lb)
        lane = np.uint64(k)
        lbk = lb[lane]
        b = Bv[np.uint64(lbk * LANES) + lane]
        sub = _substitution(b, s0[lane], s1[lane], s2[lane], s3[lane])
        edge, before = band[end + lane], last[lane]
        beside = edge if lbk - 1 - i == width else (gaps[i] if lbk == 1 else inf)
        diag = gaps[max(lbk - 1, 0)] if i == 1 else (gaps[i - 1] if lbk == 1 else inf)
        value = _least(_least(diag + sub, beside + dear), before + free)
        last[lane] = value if (lbk - i > width) | (i - lbk > width) else before


@njit(nogil=True, cache=True)
def _upper_groups(first_group, stop_group, codes, offsets, pa, pb, subst, gap, dear, inf,
                  width, out, starts, max_len):
    """_upper_group over the groups pa[starts[g]:starts[g + 1]], g from first_group to
    stop_group - 1 (subst, gap, dear and inf of one dtype)."""
    At = np.empty(max_len * LANES, dtype=np.int64)
    Bt = np.empty((max_len + 1) * LANES, dtype=np.int64)
    even = np.empty((2 * width + 1) * LANES, dtype=subst.dtype)
    odd = np.empty((2 * width + 1) * LANES, dtype=subst.dtype)
    lanes = np.empty((3, LANES), dtype=np.int64)
    Bv = np.empty((max_len + 1) * LANES, dtype=subst.dtype)
    costs = np.empty((8, LANES), dtype=subst.dtype)
    # numbers[n] = n and gaps[n] = n plain gaps (row and column 0), as values, to the
    # band's reach past an end
    numbers = np.arange(max_len + width + 2).astype(subst.dtype)
    gaps = numbers * gap
    for g in range(first_group, stop_group):
        first, stop = starts[g], starts[g + 1]
        _upper_group(codes, offsets, pa[first:stop], pb[first:stop], subst, gaps, numbers,
                     dear, inf, width, out[first:stop], At, Bt, Bv, even, odd, lanes, costs)


def lane_groups(la: np.ndarray) -> np.ndarray:
    """Starts of the groups of at most LANES consecutive pairs with A of one length (la
    sorted), and the end."""
    in_run = np.arange(len(la)) - np.searchsorted(la, la)  # position in its length's run
    return np.append(np.flatnonzero(in_run % LANES == 0), len(la)).astype(np.int64)


def upper(codes, offsets, scheme, threads: int | None = None):
    """The contract's seqdist_upper kernel: (pa, pb, width) -> upper (float64), an upper
    bound on each pair's cost. Pairs go through it LANES at a time, sorted by length, in
    the integer units of the scheme's upper_weights: in float32 where its sums are exact
    (exact_lower; 16 lanes to an AVX-512 register), else in float64 (`dtype` chooses in
    tests); the same integers as the GPU's int32 sums."""
    subst_units, (gap, dear) = scheme.upper_weights
    dearest = max(max(max(row) for row in subst_units), dear)
    lengths, max_len = np.diff(offsets), check_lengths(offsets)

    def bound(pa, pb, width, dtype=None):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        upper = np.empty(len(pa))
        if len(pa):
            if dtype is None:
                # its Python function: called from Python, Numba would compile it (0.1 s)
                exact = exact_lower.py_func(int(lengths[pa].max()), int(lengths[pb].max()),
                                            dearest)
                dtype = np.float32 if exact else np.float64
            order = np.lexsort((lengths[pb], lengths[pa]))
            sorted_upper = np.empty(len(pa))
            starts = lane_groups(lengths[pa[order]])
            in_parallel(_upper_groups, len(starts) - 1, threads, codes, offsets, pa[order],
                        pb[order], np.array(subst_units, dtype=dtype), dtype(gap),
                        dtype(dear), dtype(np.inf), width, sorted_upper, starts, max_len)
            upper[order] = sorted_upper * UNIT
        return upper

    return bound
