"""Traced alignments as the contract's tracebacks return them (backends/cpu/trace_seqdist.py,
trace_affine.py): counts per pair and the alignment as runs of moves.

Counts (COUNTS order) over an alignment's columns:
  matches, mismatches  aligned pairs with identical / different letters
  gaps                 gap columns (terminal ones included)
  openings             gap runs: maximal runs of columns with a gap in the same sequence
  columns              all columns, terminal gaps at both ends included
  terminal_gaps        gap columns counted as terminal (each traceback says which)
  terminal_openings    gap runs among those
  qlo, qhi, tlo, thi   1-based first and last residue of the query (A) and of the target
                       (B) inside the terminal gaps (vsearch's qilo/qihi/tilo/tihi)
The runs, which `Alignments.cigars` writes like vsearch's `caln`: runs of M (match or
mismatch), D (deletion: a query residue against a gap in the target) and I (insertion: a
target residue against a gap in the query), the count omitted when it is 1; "=" when the
query is identical to the target.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COUNTS = ("matches", "mismatches", "gaps", "openings", "columns", "terminal_gaps",
          "terminal_openings", "qlo", "qhi", "tlo", "thi")
(MATCHES, MISMATCHES, GAPS, OPENINGS, COLUMNS, TERMINAL_GAPS, TERMINAL_OPENINGS,
 QLO, QHI, TLO, THI) = range(len(COUNTS))
# The runs of `seqpairs align`'s traced windows (the contract's trace_windows), as an
# extended CIGAR with the target as reference: "=" identical letters, "X" different
# letters, "I" a query letter against a gap, "D" a target letter against a gap.
WINDOW_OPS = "=XID"
# Moves: DIAG aligns A[i-1] with B[j-1], LEFT puts B[j-1] against a gap in A (the query),
# UP puts A[i-1] against a gap in B.
DIAG, LEFT, UP = 0, 1, 2
OP_LETTERS = {DIAG: "M", LEFT: "I", UP: "D"}
# A run is one int32: length * RUN_ONE + move.
RUN_ONE = 4


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
        """CIGARs of the pairs `which` (indices or a mask; default all), as cigar() writes
        them, made for all of them at once: every run's digits and letter placed in one
        byte buffer, a newline after each pair, decoded and split."""
        index = np.arange(len(self)) if which is None else np.arange(len(self))[which]
        if not len(index):
            return []
        first, last = self.run_offsets[index], self.run_offsets[index + 1]
        count = last - first  # runs of each pair
        runs = self.runs[np.repeat(first - np.cumsum(count) + count, count)
                         + np.arange(count.sum())]
        length, move = runs // RUN_ONE, runs % RUN_ONE
        digits = np.where(length > 1, np.floor(np.log10(np.maximum(length, 1))) + 1,
                          0).astype(np.int64)
        width = digits + 1  # a run's bytes; each pair's runs end with a newline
        through = np.cumsum(width)
        pair = np.repeat(np.arange(len(index)), count)
        start = through - width + pair
        text = np.empty(int(through[-1]) + len(index), dtype=np.uint8)
        text[through[np.cumsum(count) - 1] + np.arange(len(index))] = ord("\n")
        text[start + digits] = np.frombuffer(b"MID", dtype=np.uint8)[move]
        for place in range(int(digits.max())):  # the units, tens, ... of each length
            has = digits > place
            text[start[has] + digits[has] - 1 - place] = (
                ord("0") + length[has] // 10**place % 10)
        cigars = text.tobytes().decode("ascii").split("\n")[:-1]
        identical = (self.counts[index, MATCHES] == self.la[index]) & (
            self.la[index] == self.lb[index])
        for k in np.flatnonzero(identical).tolist():
            cigars[k] = "="
        return cigars


@dataclass
class ScoredAlignments(Alignments):
    """Traced alignments and each pair's score (int32)."""

    score: np.ndarray


def window_runs(room, ops, lengths, counts):
    """trace_windows' results from each window's runs at the start of its room (room: where
    each window's space starts, and the end) and its counts (runs, matches, mismatches,
    openings, score)."""
    runs = counts[:, 0]
    run_offsets = np.zeros(len(runs) + 1, np.int64)
    np.cumsum(runs, out=run_offsets[1:])
    keep = np.repeat(room[:-1], runs) + (np.arange(run_offsets[-1]) -
                                          np.repeat(run_offsets[:-1], runs))
    return (run_offsets, ops[keep], lengths[keep], counts[:, 1], counts[:, 2], counts[:, 3],
            counts[:, 4])
