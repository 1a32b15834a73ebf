"""Per-batch run buffers of the CPU tracebacks (trace_seqdist.py, trace_affine.py): each pair
gets la + lb run slots; a traceback writes its runs end to start, reverses them, and the
batch's runs are compacted into alignments.Alignments."""
from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from ..alignments import COUNTS, RUN_ONE, Alignments, ScoredAlignments

# Scratch for the runs of one batch of pairs (la + lb slots per pair), in int32 entries.
BATCH_SLOTS = 1 << 23


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


def compact_runs(runs, slot_starts, n_runs):
    """The runs of all pairs back to back (pair k's first n_runs[k] slots)."""
    before = np.cumsum(n_runs) - n_runs  # where pair k's runs go
    at = np.arange(int(n_runs.sum())) + np.repeat(slot_starts[:len(n_runs)] - before, n_runs)
    return runs[at]


def batch_buffers(la, lb):
    """Outputs of one batch of tracebacks: slot starts (la + lb run slots per pair), counts,
    run slots, run counts."""
    slots = la + lb
    slot_starts = np.zeros(len(la) + 1, dtype=np.int64)
    np.cumsum(slots, out=slot_starts[1:])
    counts = np.zeros((len(la), len(COUNTS)), dtype=np.int32)
    runs = np.empty(slot_starts[-1], dtype=np.int32)
    n_runs = np.zeros(len(la), dtype=np.int64)
    return slot_starts, counts, runs, n_runs


def traced(la, lb, trace_range, scored: bool = False):
    """Alignments (ScoredAlignments when `scored`) of pairs with lengths la, lb, traced in
    batches whose run slots add up to about BATCH_SLOTS: trace_range(start, stop) traces
    pairs start..stop-1 and returns their counts, compacted runs, run counts (and scores)."""
    parts = []
    if len(la):
        starts = np.cumsum(la + lb) - (la + lb)
        bounds = np.searchsorted(starts, np.arange(0, starts[-1] + 1, BATCH_SLOTS)).tolist()
        parts = [trace_range(s, e) for s, e in itertools.pairwise(bounds + [len(la)]) if e > s]
    empty = (np.zeros((0, len(COUNTS)), np.int32), np.zeros(0, np.int32),
             np.zeros(0, np.int64), np.zeros(0, np.int32))
    columns = [np.concatenate([p[k] for p in parts] or [empty[k]])
               for k in range(4 if scored else 3)]
    run_offsets = np.concatenate(([0], np.cumsum(columns[2])))
    found = Alignments(columns[0], columns[1], run_offsets, la, lb)
    return ScoredAlignments(*vars(found).values(), columns[3]) if scored else found
