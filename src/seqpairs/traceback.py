"""Full SeqDist alignments with traceback, for the pairs that the filter has to check.

The recurrence is backends/cpu.py's own cell (`_cell`), run over the whole matrix so that
every cell's move is kept (uint8, (la+1) x (lb+1), one buffer per chunk of pairs); the
traceback from (la, lb) then follows exactly the alignment that the distance stage scored
and that tests/reference.py defines.

Per pair, `trace_pairs` gives these counts over the alignment's columns:
  matches, mismatches  aligned pairs with identical / different letters
  gaps                 gap columns (terminal ones included)
  openings             gap runs: maximal runs of columns with a gap in the same sequence
  columns              all columns, terminal gaps at both ends included
  terminal_gaps        gap columns before the first or after the last aligned pair
  terminal_openings    gap runs among those
  qlo, qhi, tlo, thi   1-based first and last residue of the query (A, sequence i) and of
                       the target (B, sequence j) that sit in an aligned pair; 0 when the
                       alignment has no aligned pair (vsearch's qilo/qihi/tilo/tihi)
and the alignment itself as runs, which `Alignments.cigars` writes like vsearch's `caln`:
runs of M (match or mismatch), D (deletion: a query residue against a gap in the target)
and I (insertion: a target residue against a gap in the query), the count omitted when
it is 1; "=" when the query is identical to the target.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from .backends.cpu import DIAG, LEFT, UP, _cell
from .scoring import SEQDIST_GAP, SEQDIST_SUBST

COUNTS = ("matches", "mismatches", "gaps", "openings", "columns", "terminal_gaps",
          "terminal_openings", "qlo", "qhi", "tlo", "thi")
(MATCHES, MISMATCHES, GAPS, OPENINGS, COLUMNS, TERMINAL_GAPS, TERMINAL_OPENINGS,
 QLO, QHI, TLO, THI) = range(len(COUNTS))
# CIGAR letter of each move: DIAG aligns A[i-1] with B[j-1], LEFT puts B[j-1] against a
# gap in A (the query), UP puts A[i-1] against a gap in B.
OP_LETTERS = {DIAG: "M", LEFT: "I", UP: "D"}
# A run is one int32: length * RUN_ONE + move.
RUN_ONE = 4
# Scratch for the runs of one batch of pairs (la + lb slots per pair), in int32 entries.
BATCH_SLOTS = 1 << 23


@njit(nogil=True, cache=True)
def _fill_moves(codes, sa, la, sb, lb, subst, h_row, moves):
    """The recurrence of backends.cpu.align_pair, storing each cell's move (row-major, lb + 1 wide)."""
    w = lb + 1
    no_counts = np.int64(0)  # _cell also updates cpu's packed counts; they are not needed here
    for j in range(w):
        h_row[j] = SEQDIST_GAP * j
        moves[j] = LEFT
    for i in range(1, la + 1):
        a = codes[sa + i - 1]
        subst_a = subst[a]
        gap_row = 0.0 if i == la else 1.0
        diag_h = h_row[0]
        left_h = SEQDIST_GAP * i
        h_row[0] = left_h
        move = UP
        moves[i * w] = UP
        prev_b = -1
        for j in range(1, w):
            b = codes[sb + j - 1]
            gap_col = 0.0 if j == lb else 1.0
            up_h = h_row[j]
            left_h, _, move = _cell(a, b, prev_b, move, diag_h, no_counts, left_h, no_counts,
                                    up_h, no_counts, subst_a, gap_row, gap_col, 0, 0)
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


@njit(inline="always")
def add_run(runs, n_runs, move, prev):
    """Count one column of `move` into the runs (a traceback writes them end to start);
    returns the new number of runs."""
    if move == prev:
        runs[n_runs - 1] += RUN_ONE
        return n_runs
    runs[n_runs] = RUN_ONE + move
    return n_runs + 1


@njit(inline="always")
def reverse_runs(runs, n_runs):
    """Put runs written end to start in alignment order, in place."""
    for r in range(n_runs // 2):
        runs[r], runs[n_runs - 1 - r] = runs[n_runs - 1 - r], runs[r]


@njit(parallel=True, nogil=True, cache=True)
def _trace_batch(codes, offsets, pa, pb, subst, slot_starts, counts, runs, n_runs, max_la, max_lb,
                 chunk):
    n = pa.shape[0]
    nchunks = (n + chunk - 1) // chunk
    for c in prange(nchunks):
        h_row = np.empty(max_lb + 1, dtype=np.float64)
        moves = np.empty((max_la + 1) * (max_lb + 1), dtype=np.uint8)
        for k in range(c * chunk, min(n, (c + 1) * chunk)):
            x, y = pa[k], pb[k]
            sa, la = offsets[x], offsets[x + 1] - offsets[x]
            sb, lb = offsets[y], offsets[y + 1] - offsets[y]
            _fill_moves(codes, sa, la, sb, lb, subst, h_row, moves)
            n_runs[k] = _trace(codes, sa, la, sb, lb, moves, counts[k],
                               runs[slot_starts[k]:slot_starts[k + 1]])


@dataclass
class Alignments:
    """Traced alignments of pairs (pa[k] as query A, pb[k] as target B)."""

    counts: np.ndarray  # int32 (pairs, len(COUNTS))
    runs: np.ndarray  # int32, length * RUN_ONE + move, all pairs' runs concatenated
    run_offsets: np.ndarray  # int64, pair k's runs are runs[run_offsets[k]:run_offsets[k+1]]
    la: np.ndarray
    lb: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.counts[:, COUNTS.index(name)]

    def cigar(self, k: int) -> str:
        """vsearch-style CIGAR of pair k (see the module docstring)."""
        runs = self.runs[self.run_offsets[k]:self.run_offsets[k + 1]]
        if self.counts[k, MATCHES] == self.la[k] == self.lb[k]:
            return "="
        return "".join(f"{'' if r < 2 * RUN_ONE else r // RUN_ONE}{OP_LETTERS[r % RUN_ONE]}"
                       for r in runs.tolist())

    def cigars(self, which=None) -> list[str]:
        """CIGARs of the pairs `which` (indices or a mask; default all)."""
        index = np.arange(len(self)) if which is None else np.arange(len(self))[which]
        return [self.cigar(k) for k in index.tolist()]


def _batches(slots: np.ndarray) -> list[tuple[int, int]]:
    """Ranges of pairs whose run slots add up to about BATCH_SLOTS each."""
    if not len(slots):
        return []
    starts = np.cumsum(slots) - slots
    bounds = np.searchsorted(starts, np.arange(0, starts[-1] + 1, BATCH_SLOTS)).tolist()
    bounds.append(len(slots))
    return [(s, e) for s, e in itertools.pairwise(bounds) if e > s]


def batch_buffers(la, lb):
    """Outputs of one batch of tracebacks: slot starts (la + lb run slots per pair), counts,
    run slots, run counts, and the chunk of pairs a thread takes at a time."""
    slots = la + lb
    slot_starts = np.zeros(len(la) + 1, dtype=np.int64)
    np.cumsum(slots, out=slot_starts[1:])
    counts = np.zeros((len(la), len(COUNTS)), dtype=np.int32)
    runs = np.empty(slot_starts[-1], dtype=np.int32)
    n_runs = np.zeros(len(la), dtype=np.int64)
    chunk = max(1, min(64, len(la) // (8 * numba.get_num_threads())))
    return slot_starts, counts, runs, n_runs, chunk


@njit(nogil=True, cache=True)
def compact_runs(runs, slot_starts, n_runs):
    """The runs of all pairs back to back (pair k's first n_runs[k] slots)."""
    out = np.empty(n_runs.sum(), dtype=runs.dtype)
    at = 0
    for k in range(n_runs.shape[0]):
        out[at:at + n_runs[k]] = runs[slot_starts[k]:slot_starts[k] + n_runs[k]]
        at += n_runs[k]
    return out


def _trace_range(codes, offsets, pa, pb, la, lb):
    """Trace one batch; returns counts, the runs compacted, and the run count of each pair."""
    slot_starts, counts, runs, n_runs, chunk = batch_buffers(la, lb)
    _trace_batch(codes, offsets, pa, pb, SEQDIST_SUBST, slot_starts, counts, runs, n_runs,
                 int(la.max()), int(lb.max()), chunk)
    return counts, compact_runs(runs, slot_starts, n_runs), n_runs


def trace_pairs(codes, offsets, pa, pb, threads: int | None = None) -> Alignments:
    """SeqDist alignments of the pairs (pa[k] as A, pb[k] as B), indices into offsets, traced back."""
    pa = np.ascontiguousarray(pa, dtype=np.int64)
    pb = np.ascontiguousarray(pb, dtype=np.int64)
    lengths = np.diff(offsets)
    la, lb = lengths[pa], lengths[pb]
    if threads:
        numba.set_num_threads(threads)
    parts = [_trace_range(codes, offsets, pa[s:e], pb[s:e], la[s:e], lb[s:e])
             for s, e in _batches(la + lb)]
    counts = np.concatenate([p[0] for p in parts] or [np.zeros((0, len(COUNTS)), np.int32)])
    runs = np.concatenate([p[1] for p in parts] or [np.zeros(0, np.int32)])
    n_runs = np.concatenate([p[2] for p in parts] or [np.zeros(0, np.int64)])
    run_offsets = np.concatenate(([0], np.cumsum(n_runs)))
    return Alignments(counts, runs, run_offsets, la, lb)
