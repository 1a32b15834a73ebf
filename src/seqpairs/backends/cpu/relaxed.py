"""The relaxed recurrence of docs/pruning.md, section 6 (pairs/prune.Pruner runs it):
per pair a lower bound on min over paths P of cost'(P) - lam g(P), g(P) = (1 - t) matches
- t (mismatches + gap columns between the first and the last aligned pair), cost' a lower
bound on SeqDist's cost of every path (each interior gap at the least it can cost there).
L(lam) above an upper bound on the chosen path's cost proves that its iddef 2 identity is
below t; L(0) is a lower bound on the cost. Given that upper bound, only the diagonals
that a path of that cost can reach are computed.

Three states a cell (before the first aligned pair, between, after the last), LANES pairs
in lockstep as backends/cpu/seqdist.py runs them, in float32 holding integers: each
step's cost scaled by SCALE and rounded down (so the sums stay lower bounds) and exact
while below 2^24."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..common import MAX_LENGTH, check_lengths, path_diagonals
from .batch import in_parallel

LANES = 64
SCALE = 16.0  # a step's cost in 1/SCALE units, rounded down
FAR = np.float32(1 << 24)  # no path: above every reachable value, still exact
BAND_STEP = 8  # pairs whose half-widths differ by less share groups


@njit(inline="always", boundscheck=False)
def _row(first, last, P0, P1, P2, Bt, a, s0, s1, s2, s3, lb, on_last_row, d0, d1, l0, l1, l2,
         least_gap, plain_gap, penalty):
    """Columns first..last of one row of LANES pairs: P0/P1/P2 the three states' row ([j *
    LANES + lane], the row above on entry), d0/d1 the up-left cells, l0/l1/l2 the left
    ones. Every load is unconditional and selected after (a load chosen by the letter
    became a gather: 3.7x slower)."""
    for j in range(first, last + 1):
        o = np.uint64(j * LANES)
        q = np.uint64((j - 1) * LANES)
        column = np.float32(j)
        for k in range(LANES):
            lane = np.uint64(k)
            b, before = Bt[o + lane], Bt[q + lane]
            # a gap may cost the homopolymer gap only where its letter B[j-1] equals A[i-1]
            # or B[j-2] (the "last match" of the move at (i, j-1)); free on the last row
            # (horizontal) and the last column (vertical)
            g = least_gap if (b == a[lane]) | (b == before) else plain_gap
            across = g * on_last_row[lane]
            down = np.float32(0.0) if column == lb[lane] else g
            c0, c1, c2, c3 = s0[lane], s1[lane], s2[lane], s3[lane]
            low = c0 if b == np.float32(0) else c1
            high = c2 if b == np.float32(2) else c3
            s = low if b < np.float32(2) else high
            u0, u1, u2 = P0[o + lane], P1[o + lane], P2[o + lane]
            x0, x1, x2 = l0[lane], l1[lane], l2[lane]
            n0 = min(x0 + across, u0 + down)
            n1 = min(min(d0[lane], d1[lane]) + s, min(x1 + across, u1 + down) + penalty)
            n2 = min(min(x1, x2) + across, min(u1, u2) + down)
            d0[lane], d1[lane] = u0, u1
            P0[o + lane], P1[o + lane], P2[o + lane] = n0, n1, n2
            l0[lane], l1[lane], l2[lane] = n0, n1, n2


@njit(nogil=True, boundscheck=False, cache=True)
def _groups(first_group, stop_group, codes, offsets, pa, pb, diagonals, steps, border,
            least_gap, plain_gap, penalty, out, max_len):
    """The groups first_group..stop_group-1 of LANES pairs (fewer repeat the last): the
    least of the three states over the cells of each pair's last row and last column
    within the group's band (|j - i| at most the largest of its diagonals) into out.
    steps[x, y]: an aligned pair of letters x and y."""
    At = np.empty(max_len * LANES, np.int64)
    Bt = np.empty((max_len + 1) * LANES, np.float32)
    P0 = np.empty((max_len + 1) * LANES, np.float32)
    P1 = np.empty_like(P0)
    P2 = np.empty_like(P0)
    la = np.empty(LANES, np.int64)
    lbi = np.empty(LANES, np.int64)
    lb = np.empty(LANES, np.float32)
    a = np.empty(LANES, np.float32)
    least = np.empty(LANES, np.float32)
    f = np.empty((10, LANES), np.float32)
    s0, s1, s2, s3, on_last_row, d0, d1, l0, l1, l2 = (f[0], f[1], f[2], f[3], f[4], f[5],
                                                      f[6], f[7], f[8], f[9])
    for g in range(first_group, stop_group):
        g0 = g * LANES
        n = min(LANES, len(pa) - g0)
        rows = cols = width = 0
        for k in range(LANES):
            x, y = pa[g0 + min(k, n - 1)], pb[g0 + min(k, n - 1)]
            la[k], lbi[k] = offsets[x + 1] - offsets[x], offsets[y + 1] - offsets[y]
            lb[k] = lbi[k]
            rows, cols = max(rows, la[k]), max(cols, lbi[k])
            width = max(width, diagonals[g0 + min(k, n - 1)])
            least[k] = FAR
        At[:rows * LANES] = 0
        Bt[:(cols + 1) * LANES] = 0
        for k in range(LANES):
            x, y = pa[g0 + min(k, n - 1)], pb[g0 + min(k, n - 1)]
            for i in range(la[k]):
                At[i * LANES + k] = codes[offsets[x] + i]
            Bt[k] = -1  # no letter before B's first
            for j in range(lbi[k]):
                Bt[(j + 1) * LANES + k] = codes[offsets[y] + j]
        # row 0; the cells right of the band hold FAR until the band reaches them
        for j in range(cols + 1):
            for k in range(LANES):
                P0[j * LANES + k] = border * j if j <= width else FAR
                P1[j * LANES + k] = FAR
                P2[j * LANES + k] = FAR
        for i in range(1, rows + 1):
            first, last = max(1, i - width), min(cols, i + width)
            if first > last:
                break
            left = (first - 1) * LANES
            for k in range(LANES):
                letter = At[(i - 1) * LANES + k]
                a[k] = letter
                s0[k], s1[k], s2[k], s3[k] = (steps[letter, 0], steps[letter, 1],
                                              steps[letter, 2], steps[letter, 3])
                on_last_row[k] = 0.0 if i == la[k] else 1.0
                d0[k], d1[k] = P0[left + k], P1[left + k]
                l0[k] = border * i if first == 1 else FAR
                l1[k], l2[k] = FAR, FAR
                if first == 1:
                    P0[k], P1[k], P2[k] = l0[k], FAR, FAR
            _row(first, last, P0, P1, P2, Bt, a, s0, s1, s2, s3, lb, on_last_row, d0, d1, l0,
                 l1, l2, least_gap, plain_gap, penalty)
            for k in range(n):
                if i <= la[k] and first <= lbi[k] <= last:  # the last column
                    c = lbi[k] * LANES + k
                    least[k] = min(least[k], min(P0[c], min(P1[c], P2[c])))
                if i == la[k]:  # the last row
                    for j in range(first, min(last, lbi[k]) + 1):
                        c = j * LANES + k
                        least[k] = min(least[k], min(P0[c], min(P1[c], P2[c])))
        for k in range(n):
            out[g0 + k] = least[k]


def bounder(codes, offsets, scheme, threads: int | None = None):
    """(pa, pb, lam, t, upper) -> float64 lower bounds on L(lam) of the pairs (pa[k] as A,
    pb[k] as B) under the SeqDistScheme (lam >= 0, 0 <= t <= 1) over the paths that cost
    at most upper[k] (an upper bound on the chosen path's cost; None: every path): those
    keep within path_diagonals of the main diagonal until the last row or column."""
    lengths = np.diff(offsets)
    subst = scheme.matrix()
    floor = lambda cost: np.float32(np.floor(SCALE * cost))  # noqa: E731

    def bound(pa, pb, lam: float, t: float, upper=None):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        out = np.empty(len(pa), np.float32)
        reward = np.where(np.eye(4, dtype=bool), 1 - t, -t)  # g's share of an aligned pair
        steps = np.floor(SCALE * (subst - lam * reward)).astype(np.float32)
        diagonals = (np.full(len(pa), MAX_LENGTH, np.int64) if upper is None
                     else path_diagonals(upper, scheme.cheapest_gap))
        if len(pa):
            # groups of like bands, then like lengths
            order = np.lexsort((lengths[pb], lengths[pa], diagonals // BAND_STEP))
            sorted_out = np.empty_like(out)
            in_parallel(_groups, (len(pa) + LANES - 1) // LANES, threads, codes, offsets,
                        pa[order], pb[order], diagonals[order], steps, floor(scheme.gap),
                        floor(scheme.cheapest_gap), floor(scheme.gap),
                        floor(lam * t), sorted_out, check_lengths(offsets))
            out[order] = sorted_out
        # float32 sums are exact below 2^24: a pair whose sums could pass it proves nothing
        largest = max(float(np.abs(steps).max()), floor(scheme.gap) + floor(lam * t))
        bounds = out.astype(np.float64) / SCALE
        bounds[largest * (lengths[pa] + lengths[pb]) >= float(FAR)] = -np.inf
        return bounds

    return bound
