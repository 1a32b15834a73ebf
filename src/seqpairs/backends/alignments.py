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
        """CIGARs of the pairs `which` (indices or a mask; default all)."""
        index = np.arange(len(self)) if which is None else np.arange(len(self))[which]
        return [self.cigar(k) for k in index.tolist()]


@dataclass
class ScoredAlignments(Alignments):
    """Traced alignments and each pair's score (int32)."""

    score: np.ndarray
