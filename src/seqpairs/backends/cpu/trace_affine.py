"""Full affine alignments with traceback, choosing among equal-scoring paths as vsearch does.

For the filter under an affine scheme (the registry's `vsearch`, or any AffineScheme). The
score is AffineScheme's (its docstring: costs, end gaps, borders), so it equals
backends/cpu/affine.py's score for the same pair and scheme. Which of the optimal paths
is traced follows vsearch 2.22.1's search16/backtrack16 (align_simd.cc), so that the
counts, CIGAR and identities are vsearch's:
  H(i, j): D unless F > D; then E if E > max(D, F) (ties prefer D, then F, then E)
  E(i, j): extends E(i, j-1) only when that scores strictly more than opening from
           H(i, j-1) (ties open); F(i, j) likewise from F(i-1, j) / H(i-1, j)
  walk back from (la, lb) in the state H; in E (F) the next state is E (F) when the cell
  extends, else H; once on row 0 or column 0 the path follows that border.
A is vsearch's query (rows), B its target (columns); tests/reference_affine.py
(vsearch_traceback) is the plain reference, and tests/test_vsearch.py checks both against
vsearch itself.

`trace_pairs` gives backends/alignments.py's counts and runs (ScoredAlignments), with
vsearch's trimming (align_trim in searchcore.cc) for the terminal gaps: terminal gaps are
the first run and the last run of the alignment when they are gap runs, and
qlo/qhi/tlo/thi are vsearch's qilo/qihi/tilo/tihi: 1 + the query (target) letters in the
leading trimmed run, and the length minus those in the trailing one. These agree with
trace_seqdist.py's definitions (every gap column outside the aligned pairs) except for an
alignment that starts or ends with two gap runs, or has no aligned pair, which vsearch
trims its own way. Also the score of each pair.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...scoring.affine import NEG
from ..alignments import (
    COLUMNS,
    DIAG,
    GAPS,
    LEFT,
    MATCHES,
    MISMATCHES,
    OPENINGS,
    QHI,
    QLO,
    RUN_ONE,
    TERMINAL_GAPS,
    TERMINAL_OPENINGS,
    THI,
    TLO,
    UP,
)
from ..common import AFFINE_COUNTS, check_lengths
from .batch import in_parallel
from .runs import add_run, batch_buffers, compact_runs, reverse_runs, traced

# A move byte: bit 0 set when H(i, j) takes E (left), else bit 1 when it takes F (up), else
# it takes D; E_EXTENDS when E(i, j) extends E(i, j-1), F_EXTENDS when F(i, j) extends
# F(i-1, j) (vsearch's four direction bits).
TAKES_E = 1
TAKES_F = 2
E_EXTENDS = 4
F_EXTENDS = 8
# The anti-diagonal buffers are rows of one int32 array, indexed by the row i: H of the
# diagonals d, d-1, d-2, E and F of d and d-1. `rows` names them in this order; moving on
# to the next diagonal permutes it (_next_rows) instead of copying rows.


@njit(inline="always")
def _cell(left, up, dg, e, f, s, oh, eh, ov, ev):
    """One cell from its neighbours' states (int32): returns H, E, F and the move byte.

    left = H(i, j-1), e = E(i, j-1), up = H(i-1, j), f = F(i-1, j), dg = H(i-1, j-1),
    s the substitution score, (oh, eh) the row's horizontal and (ov, ev) the column's
    vertical gap steps (open + extend, extend). Comparisons only, so the loops that call
    it vectorize.
    """
    f = np.int32(f - ev)
    f_open = np.int32(up - ov)
    f_extends = f > f_open  # ties open
    f = max(f, f_open)
    e = np.int32(e - eh)
    e_open = np.int32(left - oh)
    e_extends = e > e_open
    e = max(e, e_open)
    d = np.int32(dg + s)
    takes_f = f > d  # ties: D, then F, then E
    h = max(d, f)
    takes_e = e > h
    h = max(h, e)
    move = (np.uint8(takes_e) | (np.uint8(takes_f) << np.uint8(1))
            | (np.uint8(e_extends) << np.uint8(2)) | (np.uint8(f_extends) << np.uint8(3)))
    return h, e, f, move


@njit(nogil=True, cache=True)
def _cells_match(buf, rows, codes, brev, moves, i0, a0, r0, m0, n, match, mismatch, step,
                 extend):
    """Cells i0 .. i0 + n - 1 of an anti-diagonal, away from the last row and column, for a
    scheme of one match and one mismatch score. A's letter of cell i0 + t is codes[a0 + t],
    B's is brev[r0 + t] (B reversed); its move goes to moves[m0 + t]. Unsigned indices:
    no wraparound checks, so the loop vectorizes."""
    h0, h1, h2, e0, e1, f0, f1 = rows
    up0 = i0 - np.uint64(1)
    for t in range(n):
        s = match if codes[a0 + t] == brev[r0 + t] else mismatch
        i, up = i0 + t, up0 + t
        h, e, f, move = _cell(buf[h1, i], buf[h1, up], buf[h2, up], buf[e1, i], buf[f1, up], s,
                              step, extend, step, extend)
        buf[h0, i], buf[e0, i], buf[f0, i] = h, e, f
        moves[m0 + t] = move


@njit(nogil=True, cache=True)
def _cells_subst(buf, rows, codes, prof, moves, i0, a0, r0, m0, n, step, extend):
    """_cells_match for any substitution matrix: prof[x, r] scores letter x against B's
    letter r from the end."""
    h0, h1, h2, e0, e1, f0, f1 = rows
    p0, p1, p2, p3 = prof[0], prof[1], prof[2], prof[3]
    up0 = i0 - np.uint64(1)
    for t in range(n):
        # every row is loaded and one selected: a load that depends on the letter would
        # stop the loop from vectorizing
        s0, s1, s2, s3 = p0[r0 + t], p1[r0 + t], p2[r0 + t], p3[r0 + t]
        a = codes[a0 + t]
        s = s0 if a == 0 else (s1 if a == 1 else (s2 if a == 2 else s3))
        i, up = i0 + t, up0 + t
        h, e, f, move = _cell(buf[h1, i], buf[h1, up], buf[h2, up], buf[e1, i], buf[f1, up], s,
                              step, extend, step, extend)
        buf[h0, i], buf[e0, i], buf[f0, i] = h, e, f
        moves[m0 + t] = move


@njit(nogil=True, cache=True)
def _cells_table(buf, rows, codes, prof, moves, i0, a0, r0, m0, n, step, extend):
    """_cells_match for an alphabet of any size: prof[x, r] scores letter x against B's
    letter r from the end, read at A's letter."""
    h0, h1, h2, e0, e1, f0, f1 = rows
    up0 = i0 - np.uint64(1)
    for t in range(n):
        s = prof[codes[a0 + t], r0 + t]
        i, up = i0 + t, up0 + t
        h, e, f, move = _cell(buf[h1, i], buf[h1, up], buf[h2, up], buf[e1, i], buf[f1, up], s,
                              step, extend, step, extend)
        buf[h0, i], buf[e0, i], buf[f0, i] = h, e, f
        moves[m0 + t] = move


@njit(nogil=True, cache=True)
def _edge_cell(buf, rows, i, s, oh, eh, ov, ev, moves, m):
    """One cell of row i on the last row or column, with its own gap steps."""
    h0, h1, h2, e0, e1, f0, f1 = rows
    h, e, f, move = _cell(buf[h1, i], buf[h1, i - 1], buf[h2, i - 1], buf[e1, i],
                          buf[f1, i - 1], s, oh, eh, ov, ev)
    buf[h0, i], buf[e0, i], buf[f0, i] = h, e, f
    moves[m] = move


@njit(inline="always")
def _next_rows(rows):
    """`rows` for the next diagonal: d becomes d - 1, d - 1 becomes d - 2."""
    h0, h1, h2, e0, e1, f0, f1 = rows
    return h2, h0, h1, e1, e0, f1, f0


@njit(nogil=True, cache=True)
def _fill_moves(codes, sa, la, sb, lb, subst, match_only, gap_open, gap_extend, end_open,
                end_extend, buf, prof, diag_base, moves):
    """The recurrence over the whole matrix by anti-diagonals d = i + j; cell (i, j)'s move
    byte goes to moves[diag_base[i + j] + i]. Returns the score H(la, lb).

    buf: int32 (7, >= la + 1); prof: int32 (K, >= lb) for K letters; diag_base: int64
    (>= la + lb + 1).
    """
    step, extend = np.int32(gap_open + gap_extend), np.int32(gap_extend)
    end_step, end_ext = np.int32(end_open + end_extend), np.int32(end_extend)
    for r in range(lb):  # B reversed, so that a diagonal reads it forwards
        b = codes[sb + lb - 1 - r]
        for x in range(subst.shape[0]):
            prof[x, r] = b if match_only else subst[x, b]
    match, mismatch = np.int32(subst[0, 0]), np.int32(subst[0, 1])
    rows = (np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4), np.uint64(5),
            np.uint64(6))
    h0, h1, h2, e0, e1, f0, f1 = rows
    buf[h2, 0] = 0  # diagonal 0: H(0, 0); diagonal 1: H(0, 1), H(1, 0)
    buf[h1, 0] = buf[h1, 1] = -(end_open + end_extend)
    buf[e1, 1] = buf[f1, 0] = NEG
    start = 0  # moves of the diagonals before d
    for d in range(2, la + lb + 1):
        lo, hi = max(1, d - lb), min(la, d - 1)
        base = start - lo
        diag_base[d] = base
        last_col, last_row = lo == d - lb, hi == la  # holds cell (lo, lb), cell (la, d - la)
        first, n = lo + last_col, hi - lo + 1 - last_col - last_row
        if n > 0:
            r0 = lb - d + first
            if match_only:
                _cells_match(buf, rows, codes, prof[0], moves, np.uint64(first),
                             np.uint64(sa + first - 1), np.uint64(r0), np.uint64(base + first),
                             np.uint64(n), match, mismatch, step, extend)
            elif subst.shape[0] == 4:
                _cells_subst(buf, rows, codes, prof, moves, np.uint64(first),
                             np.uint64(sa + first - 1), np.uint64(r0), np.uint64(base + first),
                             np.uint64(n), step, extend)
            else:
                _cells_table(buf, rows, codes, prof, moves, np.uint64(first),
                             np.uint64(sa + first - 1), np.uint64(r0), np.uint64(base + first),
                             np.uint64(n), step, extend)
        if last_col:  # vertical gaps in the last column are terminal
            i = lo
            oh, eh = (end_step, end_ext) if i == la else (step, extend)
            _edge_cell(buf, rows, i, subst[codes[sa + i - 1], codes[sb + lb - 1]], oh, eh, end_step,
                       end_ext, moves, base + i)
        if last_row and not (last_col and lo == hi):  # horizontal gaps on the last row
            j = d - la
            _edge_cell(buf, rows, la, subst[codes[sa + la - 1], codes[sb + j - 1]], end_step,
                       end_ext, step, extend, moves, base + la)
        start += hi - lo + 1
        h0, h1, h2, e0, e1, f0, f1 = rows
        if d <= la:  # border cells of diagonal d
            buf[h0, d] = -(end_open + d * end_extend)
            buf[e0, d] = NEG
        if d <= lb:
            buf[h0, 0] = -(end_open + d * end_extend)
            buf[f0, 0] = NEG
        rows = _next_rows(rows)
    return buf[rows[1], la]


@njit(nogil=True, cache=True)
def _trace(codes, sa, la, sb, lb, moves, diag_base, counts, runs):
    """Walk the moves back from (la, lb); fill `counts` (COUNTS order) and `runs`.

    Returns the number of runs, written start to end.
    """
    i, j = la, lb
    counts[:] = 0
    n_runs = 0
    prev = -1
    state = DIAG  # DIAG: in H; LEFT: in E; UP: in F
    while i > 0 or j > 0:
        if i == 0:
            move = LEFT
        elif j == 0:
            move = UP
        else:
            m = moves[diag_base[i + j] + i]
            if state == DIAG:
                move = LEFT if m & TAKES_E else (UP if m & TAKES_F else DIAG)
            else:
                move = state
            if move == LEFT:
                state = LEFT if m & E_EXTENDS else DIAG
            elif move == UP:
                state = UP if m & F_EXTENDS else DIAG
        if move == DIAG:
            if codes[sa + i - 1] == codes[sb + j - 1]:
                counts[MATCHES] += 1
            else:
                counts[MISMATCHES] += 1
            i -= 1
            j -= 1
        else:
            counts[GAPS] += 1
            if move != prev:
                counts[OPENINGS] += 1
            if move == LEFT:
                j -= 1
            else:
                i -= 1
        n_runs = add_run(runs, n_runs, move, prev)
        prev = move
        counts[COLUMNS] += 1
    reverse_runs(runs, n_runs)
    # vsearch's align_trim: a leading and a trailing gap run are terminal
    trim_q_left = trim_t_left = trim_q_right = trim_t_right = 0
    first, last = runs[0], runs[n_runs - 1]
    if first % RUN_ONE == UP:
        trim_q_left = first // RUN_ONE
    elif first % RUN_ONE == LEFT:
        trim_t_left = first // RUN_ONE
    if n_runs > 1:
        if last % RUN_ONE == UP:
            trim_q_right = last // RUN_ONE
        elif last % RUN_ONE == LEFT:
            trim_t_right = last // RUN_ONE
    counts[TERMINAL_GAPS] = trim_q_left + trim_t_left + trim_q_right + trim_t_right
    counts[TERMINAL_OPENINGS] = ((trim_q_left + trim_t_left > 0)
                                 + (trim_q_right + trim_t_right > 0))
    counts[QLO], counts[QHI] = trim_q_left + 1, la - trim_q_right
    counts[TLO], counts[THI] = trim_t_left + 1, lb - trim_t_right
    return n_runs


@njit(nogil=True, cache=True)
def _trace_pairs(first, stop, codes, offsets, pa, pb, subst, match_only, gap_open, gap_extend,
                 end_open, end_extend, slot_starts, counts, runs, n_runs, score, max_la,
                 max_lb):
    """The alignments of pairs first..stop-1."""
    buf = np.empty((7, max_la + 1), dtype=np.int32)
    prof = np.empty((subst.shape[0], max_lb), dtype=np.int32)
    diag_base = np.empty(max_la + max_lb + 1, dtype=np.int64)
    moves = np.empty(max_la * max_lb, dtype=np.uint8)
    for k in range(first, stop):
        x, y = pa[k], pb[k]
        sa, la = offsets[x], offsets[x + 1] - offsets[x]
        sb, lb = offsets[y], offsets[y + 1] - offsets[y]
        score[k] = _fill_moves(codes, sa, la, sb, lb, subst, match_only, gap_open,
                               gap_extend, end_open, end_extend, buf, prof, diag_base,
                               moves)
        n_runs[k] = _trace(codes, sa, la, sb, lb, moves, diag_base, counts[k],
                           runs[slot_starts[k]:slot_starts[k + 1]])


def trace_pairs(codes, offsets, pa, pb, scheme, threads: int | None = None):
    """Affine alignments (alignments.ScoredAlignments) of the pairs (pa[k] as A, the query;
    pb[k] as B, the target), indices into offsets, traced back with vsearch's tie rules."""
    pa = np.ascontiguousarray(pa, dtype=np.int64)
    pb = np.ascontiguousarray(pb, dtype=np.int64)
    lengths = np.diff(offsets)
    la, lb = lengths[pa], lengths[pb]
    subst = scheme.matrix()
    off_diagonal = subst[~np.eye(len(subst), dtype=bool)]
    match_only = bool(len(subst) > 1 and (np.diag(subst) == subst[0, 0]).all()
                      and (off_diagonal == subst[0, 1]).all())
    if len(pa):
        check_lengths(offsets)

    def trace_range(start, stop):
        slot_starts, counts, runs, n_runs = batch_buffers(la[start:stop], lb[start:stop])
        score = np.zeros(stop - start, dtype=np.int32)
        in_parallel(_trace_pairs, stop - start, threads, codes, offsets, pa[start:stop],
                    pb[start:stop], subst, match_only, scheme.gap_open, scheme.gap_extend,
                    scheme.end_open, scheme.end_extend, slot_starts, counts, runs, n_runs,
                    score, int(la[start:stop].max()), int(lb[start:stop].max()))
        return counts, compact_runs(runs, slot_starts, n_runs), n_runs, score

    return traced(la, lb, trace_range, scored=True)


def tracer(codes, offsets, scheme, threads: int | None = None):
    """The contract's trace_affine kernel on the CPU: (pa, pb) -> trace_pairs'."""
    return lambda pa, pb: trace_pairs(codes, offsets, pa, pb, scheme, threads)


def counter(codes, offsets, scheme, threads: int | None = None):
    """The contract's affine_counts kernel on the CPU: (pa, pb) -> the AFFINE_COUNTS (int32)
    of each pair's traced alignment (trace_pairs' counts and score)."""

    def count(pa, pb):
        al = trace_pairs(codes, offsets, pa, pb, scheme, threads)
        return (al.score.astype(np.int32),
                *(al[name].astype(np.int32) for name in AFFINE_COUNTS[1:]))

    return count
