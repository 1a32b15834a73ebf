"""Full SeqDist alignments with traceback, for the pairs that the filter has to check.

The recurrence is backends/cpu/seqdist.py's own `cell`, run over the whole matrix so that
every cell's move is kept (uint8, (la+1) x (lb+1), one buffer per chunk of pairs); the
traceback from (la, lb) then follows exactly the alignment that the distance stage scored
and that tests/reference.py defines. Per pair it gives backends/alignments.py's counts and runs;
terminal gaps are every gap column before the first or after the last aligned pair, and
qlo/qhi/tlo/thi the first and last residues in an aligned pair (0 when there is none).
"""
from __future__ import annotations

import numpy as np
from numba import njit

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
    TERMINAL_GAPS,
    TERMINAL_OPENINGS,
    THI,
    TLO,
    UP,
)
from .batch import in_parallel
from .runs import add_run, batch_buffers, compact_runs, reverse_runs, traced
from .seqdist import cell


@njit(nogil=True, cache=True)
def _fill_moves(codes, sa, la, sb, lb, subst, gap, homopolymer_gap, h_row, moves):
    """The recurrence of seqdist.align_pair, storing each cell's move (row-major, lb + 1 wide)."""
    w = lb + 1
    no_counts = np.int64(0)  # `cell` also updates the packed counts; they are not needed here
    for j in range(w):
        h_row[j] = gap * j
        moves[j] = LEFT
    for i in range(1, la + 1):
        a = codes[sa + i - 1]
        subst_a = subst[a]
        gap_row = 0.0 if i == la else 1.0
        diag_h = h_row[0]
        left_h = gap * i
        h_row[0] = left_h
        move = UP
        moves[i * w] = UP
        prev_b = -1
        for j in range(1, w):
            b = codes[sb + j - 1]
            gap_col = 0.0 if j == lb else 1.0
            up_h = h_row[j]
            left_h, _, move = cell(a, b, prev_b, move, diag_h, no_counts, left_h, no_counts,
                                   up_h, no_counts, subst_a, gap, homopolymer_gap, gap_row,
                                   gap_col, 0, 0)
            h_row[j] = left_h
            moves[i * w + j] = move
            diag_h = up_h
            prev_b = b


@njit(nogil=True, cache=True)
def _trace(codes, sa, la, sb, lb, moves, counts, runs):
    """Walk the moves back from (la, lb); fill `counts` (COUNTS order) and `runs`.

    Returns the number of runs, written start to end.
    """
    w = lb + 1
    i, j = la, lb
    counts[:] = 0
    n_runs = 0
    prev = -1
    pending = pending_runs = 0  # gap columns and runs since the last aligned pair seen
    seen_aligned = False
    while i > 0 or j > 0:
        move = moves[i * w + j]
        if move == DIAG:
            if codes[sa + i - 1] == codes[sb + j - 1]:
                counts[MATCHES] += 1
            else:
                counts[MISMATCHES] += 1
            if not seen_aligned:  # walking backwards: this is the last aligned pair
                seen_aligned = True
                counts[QHI], counts[THI] = i, j
                counts[TERMINAL_GAPS] += pending
                counts[TERMINAL_OPENINGS] += pending_runs
            pending = pending_runs = 0
            counts[QLO], counts[TLO] = i, j
            i -= 1
            j -= 1
        else:
            counts[GAPS] += 1
            pending += 1
            if move != prev:
                counts[OPENINGS] += 1
                pending_runs += 1
            if move == LEFT:
                j -= 1
            else:
                i -= 1
        n_runs = add_run(runs, n_runs, move, prev)
        prev = move
        counts[COLUMNS] += 1
    # gaps before the first aligned pair (all of them when nothing was aligned)
    counts[TERMINAL_GAPS] += pending
    counts[TERMINAL_OPENINGS] += pending_runs
    reverse_runs(runs, n_runs)
    return n_runs


@njit(nogil=True, cache=True)
def _trace_pairs(first, stop, codes, offsets, pa, pb, subst, gap, homopolymer_gap, slot_starts,
                 counts, runs, n_runs, max_la, max_lb):
    """The alignments of pairs first..stop-1."""
    h_row = np.empty(max_lb + 1, dtype=np.float64)
    moves = np.empty((max_la + 1) * (max_lb + 1), dtype=np.uint8)
    for k in range(first, stop):
        x, y = pa[k], pb[k]
        sa, la = offsets[x], offsets[x + 1] - offsets[x]
        sb, lb = offsets[y], offsets[y + 1] - offsets[y]
        _fill_moves(codes, sa, la, sb, lb, subst, gap, homopolymer_gap, h_row, moves)
        n_runs[k] = _trace(codes, sa, la, sb, lb, moves, counts[k],
                           runs[slot_starts[k]:slot_starts[k + 1]])


def trace_pairs(codes, offsets, pa, pb, scheme, threads: int | None = None):
    """SeqDist alignments (alignments.Alignments) of the pairs (pa[k] as A, pb[k] as B),
    indices into offsets, traced back."""
    pa = np.ascontiguousarray(pa, dtype=np.int64)
    pb = np.ascontiguousarray(pb, dtype=np.int64)
    lengths = np.diff(offsets)
    la, lb = lengths[pa], lengths[pb]
    subst = scheme.matrix()

    def trace_range(start, stop):
        slot_starts, counts, runs, n_runs = batch_buffers(la[start:stop], lb[start:stop])
        in_parallel(_trace_pairs, stop - start, threads, codes, offsets, pa[start:stop],
                    pb[start:stop], subst, scheme.gap, scheme.homopolymer_gap, slot_starts,
                    counts, runs, n_runs, int(la[start:stop].max()), int(lb[start:stop].max()))
        return counts, compact_runs(runs, slot_starts, n_runs), n_runs

    return traced(la, lb, trace_range)
