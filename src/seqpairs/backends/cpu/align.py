"""Numba kernels of `seqpairs align` (the contract's align_ends, align_starts and
trace_windows): the score and end of each pair's best alignment under an AlignMode
(scoring/local.py), its start by a reverse pass anchored at the end, and the alignment
itself by a global traceback of the window between start and end.

Rows are target letters, columns query letters, as in LocalScheme's recurrence. Scores
are int64 inside a kernel (a global alignment of two MAX_LENGTH sequences can reach
-3.3e8, far from the int32 bounds, but the border terms are safer without overflow games).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..alignments import WINDOW_OPS, window_runs
from .batch import in_parallel, pair_kernel

NEG = -(1 << 40)  # minus infinity: stays far below every score after any subtraction
# the run codes: indices into WINDOW_OPS
SAME, DIFFERENT, INSERTION, DELETION = (WINDOW_OPS.index(op) for op in "=XID")
# traceback bits of a window cell: where H came from (0 diagonal, 1 E, 2 F) and whether E
# and F extend a gap (else they open one from H)
FROM_E, FROM_F, E_EXTENDS, F_EXTENDS = 1, 2, 4, 8


@njit(inline="always")
def _gap(length, opening, extend):
    """Cost of a gap of `length` >= 1 letters (opening pays the first)."""
    return opening + (length - 1) * extend


@njit(inline="always")
def _border(k, opening, extend):
    """H of row or column k of a border that pays its gaps: 0, then minus a gap's cost."""
    return 0 if k == 0 else -_gap(k, opening, extend)


@njit(inline="always")
def _cell(step, diag, left, e, up, f_up, opening, extend):
    """(E, F, H) of a cell by LocalScheme's recurrence without the floor at 0, from the
    cells up-left (diag), left (left, and its E) and up (up, and its F)."""
    e = max(e - extend, left - opening)
    f = max(f_up - extend, up - opening)
    return e, f, max(diag + step, e, f)


@njit(nogil=True, cache=True)
def _forward(q, m, t, n, subst, opening, extend, local, free_ends, h_row, f_row):
    """(score, query end, target end) of the best alignment of q[:m] against t[:n], 1-based
    ends; ties: the smallest target end, then the smallest query end (row-major order)."""
    for j in range(m):
        h_row[j] = 0 if local else -_gap(j + 1, opening, extend)
        f_row[j] = NEG
    # semi-global: at least one target letter (as parasail's sg), so no end in row 0
    best, bi, bj = (NEG if free_ends else 0), 0, 0
    left = 0
    for i in range(1, n + 1):
        b = t[i - 1]
        if local or free_ends:
            diag, left = 0, 0
        else:
            diag, left = _border(i - 1, opening, extend), _border(i, opening, extend)
        e = NEG
        for j in range(m):
            e, f, h = _cell(subst[q[j], b], diag, left, e, h_row[j], f_row[j], opening,
                            extend)
            if local:
                h = max(h, 0)
                if h > best:
                    best, bi, bj = h, i, j + 1
            diag = h_row[j]
            h_row[j] = h
            f_row[j] = f
            left = h
        if free_ends and left > best:
            best, bi, bj = left, i, m
    if not local and not free_ends:
        best, bi, bj = left, n, m
    return best, bj, bi


@njit(inline="always")
def reverse_rows(qend, tend, score, best_step, opening, extend):
    """Rows the reverse pass needs: an alignment of at most qend query letters against r
    > qend target letters puts r - qend of them against gaps, so it scores at most
    best_step * qend - (opening + (r - qend - 1) * extend), and r beyond the bound below
    cannot reach `score`."""
    slack = best_step * qend - score - opening
    if slack < 0:
        return min(tend, qend)
    if extend > 0:
        return min(tend, qend + 1 + slack // extend)
    return tend


@njit(nogil=True, cache=True)
def _reverse(q, qend, t, tend, subst, opening, extend, score, free_ends, h_row, f_row):
    """(query start, target start), 1-based, of the alignment scoring `score` that ends at
    (qend, tend): the prefixes reversed and aligned from that anchor (no zero floor, so
    every path keeps it), stopping at the first cell in row-major order that reaches the
    score: the shortest target span, then the shortest query span. Semi-global alignments
    take the whole query, so only its last column may stop; where no row does, the score
    is that of the query against gaps only (the target's letters all overhang, as H(i, 0)
    = 0 lets them) and the target start is 0."""
    for j in range(qend):
        h_row[j] = -_gap(j + 1, opening, extend)
        f_row[j] = NEG
    rows = reverse_rows(qend, tend, score, max(subst.max(), 0), opening, extend)
    for i in range(1, rows + 1):
        b = t[tend - i]
        diag, left = _border(i - 1, opening, extend), _border(i, opening, extend)
        e = NEG
        for j in range(qend):
            e, f, h = _cell(subst[q[qend - 1 - j], b], diag, left, e, h_row[j], f_row[j],
                            opening, extend)
            diag = h_row[j]
            h_row[j] = h
            f_row[j] = f
            left = h
            if h == score and not free_ends:
                return qend - j, tend - i + 1
        if free_ends and left == score:
            return 1, tend - i + 1
    return 1, 0  # semi-global, the query against gaps only (local: unreachable)


@njit(nogil=True, cache=True)
def _trace(q, t, subst, opening, extend, moves, ops, lengths):
    """Global alignment of q against t (the window) with its traceback: fills ops/lengths
    with the runs from the start and returns (runs, matches, mismatches, gap openings,
    score). Ties: H prefers the diagonal, then E, then F; a gap prefers opening over
    extending. `moves` holds (len(t) + 1) * (len(q) + 1) cells."""
    m, n = q.shape[0], t.shape[0]
    w = m + 1
    h_row = np.empty(m + 1, np.int64)
    f_row = np.empty(m + 1, np.int64)
    h_row[0] = 0
    f_row[0] = NEG
    for j in range(1, m + 1):
        h_row[j] = -_gap(j, opening, extend)
        f_row[j] = NEG
        moves[j] = FROM_E | (E_EXTENDS if j > 1 else 0)
    for i in range(1, n + 1):
        b = t[i - 1]
        diag = h_row[0]
        left = -_gap(i, opening, extend)
        h_row[0] = left
        moves[i * w] = FROM_F | (F_EXTENDS if i > 1 else 0)
        e = NEG
        for j in range(1, m + 1):
            bits = 0
            e_open, e_ext = left - opening, e - extend
            if e_ext > e_open:
                e, bits = e_ext, bits | E_EXTENDS
            else:
                e = e_open
            f_open, f_ext = h_row[j] - opening, f_row[j] - extend
            if f_ext > f_open:
                f, bits = f_ext, bits | F_EXTENDS
            else:
                f = f_open
            h = diag + subst[q[j - 1], b]
            if e > h:
                h, bits = e, bits | FROM_E
            if f > h:
                h, bits = f, (bits & ~FROM_E) | FROM_F
            diag = h_row[j]
            h_row[j] = h
            f_row[j] = f
            left = h
            moves[i * w + j] = bits
    score = h_row[m]
    # walk back from (n, m), writing runs backwards from the end of ops
    i, j, state = n, m, 0  # state 0: H, 1: E, 2: F
    runs, matches, mismatches, openings = 0, 0, 0, 0
    last = -1
    cap = ops.shape[0]
    while i > 0 or j > 0:
        bits = moves[i * w + j]
        if state == 0:
            state = 1 if bits & FROM_E else 2 if bits & FROM_F else 0
            if i == 0:
                state = 1
            elif j == 0:
                state = 2
        if state == 0:
            op = SAME if q[j - 1] == t[i - 1] else DIFFERENT
            if op == SAME:
                matches += 1
            else:
                mismatches += 1
            i -= 1
            j -= 1
        elif state == 1:
            op = INSERTION
            if not bits & E_EXTENDS:
                state = 0
                openings += 1
            j -= 1
        else:
            op = DELETION
            if not bits & F_EXTENDS:
                state = 0
                openings += 1
            i -= 1
        if op == last:
            lengths[cap - runs] += 1
        else:
            runs += 1
            ops[cap - runs] = op
            lengths[cap - runs] = 1
            last = op
    ops[:runs] = ops[cap - runs:].copy()
    lengths[:runs] = lengths[cap - runs:].copy()
    return runs, matches, mismatches, openings, score


@njit(nogil=True, cache=True)
def _ends(first, stop, codes, offsets, pa, pb, subst, opening, extend, local, free_ends, score,
          qend, tend, max_len):
    """Ends of pairs first..stop-1."""
    h_row = np.empty(max_len, np.int64)
    f_row = np.empty(max_len, np.int64)
    for k in range(first, stop):
        q = codes[offsets[pa[k]]:offsets[pa[k] + 1]]
        t = codes[offsets[pb[k]]:offsets[pb[k] + 1]]
        s, qe, te = _forward(q, len(q), t, len(t), subst, opening, extend, local,
                             free_ends, h_row, f_row)
        score[k], qend[k], tend[k] = s, qe, te


@njit(nogil=True, cache=True)
def _starts(first, stop, codes, offsets, pa, pb, score, qend, tend, subst, opening, extend,
            local, free_ends, qstart, tstart, max_len):
    """Starts of pairs first..stop-1."""
    h_row = np.empty(max_len, np.int64)
    f_row = np.empty(max_len, np.int64)
    for k in range(first, stop):
        if local and score[k] == 0:  # no alignment: nothing to start
            qstart[k], tstart[k] = 0, 0
        elif not local and not free_ends:
            qstart[k], tstart[k] = 1, 1
        else:
            q = codes[offsets[pa[k]]:offsets[pa[k] + 1]]
            t = codes[offsets[pb[k]]:offsets[pb[k] + 1]]
            qs, ts = _reverse(q, np.int64(qend[k]), t, np.int64(tend[k]), subst, opening,
                              extend, np.int64(score[k]), free_ends, h_row, f_row)
            qstart[k], tstart[k] = qs, ts


@njit(nogil=True, cache=True)
def _windows(first, stop, codes, offsets, pa, pb, qstart, qend, tstart, tend, subst, opening,
             extend, run_offsets, ops, lengths, counts):
    """Window alignments of pairs first..stop-1."""
    for k in range(first, stop):
        q0 = offsets[pa[k]]
        t0 = offsets[pb[k]]
        q = codes[q0 + max(qstart[k], 1) - 1:q0 + qend[k]]
        t = codes[t0 + max(tstart[k], 1) - 1:t0 + tend[k]]
        moves = np.empty((len(t) + 1) * (len(q) + 1), np.uint8)
        lo, hi = run_offsets[k], run_offsets[k + 1]
        runs, matches, mismatches, openings, score = _trace(
            q, t, subst, opening, extend, moves, ops[lo:hi], lengths[lo:hi])
        counts[k, 0], counts[k, 1], counts[k, 2] = runs, matches, mismatches
        counts[k, 3], counts[k, 4] = openings, score


def _pairs(pa, pb):
    return (np.ascontiguousarray(pa, dtype=np.int64), np.ascontiguousarray(pb, dtype=np.int64))


def _costs(scheme):
    return scheme.matrix("int64"), scheme.gap_open + scheme.gap_extend, scheme.gap_extend


def _values(scheme, mode):
    return (*_costs(scheme), mode.local, mode.free_target_ends)


def ends(codes, offsets, scheme, mode, threads=None):
    """The contract's align_ends: kernel (pa, pb) -> score, query end, target end (int32)."""
    return pair_kernel(codes, offsets, threads, _ends, _values(scheme, mode), (np.int32,) * 3)


def starts(codes, offsets, scheme, mode, threads=None):
    """The contract's align_starts: kernel (pa, pb, score, qend, tend) -> query start,
    target start (int32; 0 where the alignment holds no letter of that sequence)."""
    max_len = int(np.diff(offsets).max(initial=0)) + 1

    def align(pa, pb, score, qend, tend):
        pa, pb = _pairs(pa, pb)
        out = [np.empty(len(pa), np.int32) for _ in range(2)]
        if len(pa):
            in_parallel(_starts, len(pa), threads, codes, offsets, pa, pb,
                        *(np.ascontiguousarray(a, np.int32) for a in (score, qend, tend)),
                        *_values(scheme, mode), *out, max_len)
        return tuple(out)

    return align


def trace_windows(codes, offsets, pa, pb, qstart, qend, tstart, tend, scheme, threads=None):
    """The contract's trace_windows: the global alignment of each pair's window (query
    qstart..qend against target tstart..tend, 1-based, inclusive; 0..0 for none) as runs.
    Returns (run_offsets int64[P + 1], ops uint8, lengths int32, matches, mismatches,
    gap openings, score (int64[P] each)); pair k's runs are ops/lengths[run_offsets[k]:
    run_offsets[k + 1]], from the start of the alignment, op codes indexing
    alignments.WINDOW_OPS."""
    pa, pb = _pairs(pa, pb)
    coords = [np.ascontiguousarray(a, np.int64) for a in (qstart, qend, tstart, tend)]
    spans = (coords[1] - np.maximum(coords[0], 1) + 1).clip(0) + \
        (coords[3] - np.maximum(coords[2], 1) + 1).clip(0)
    room = np.zeros(len(pa) + 1, np.int64)
    np.cumsum(spans, out=room[1:])
    ops = np.empty(room[-1], np.uint8)
    lengths = np.empty(room[-1], np.int32)
    counts = np.zeros((len(pa), 5), np.int64)
    if len(pa):
        in_parallel(_windows, len(pa), threads, codes, offsets, pa, pb, *coords,
                    *_costs(scheme), room, ops, lengths, counts)
    return window_runs(room, ops, lengths, counts)
