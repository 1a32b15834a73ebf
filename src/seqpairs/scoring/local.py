"""Integer Smith-Waterman local alignment with affine gaps (Gotoh), as data.

`LocalScheme`'s docstring is the recurrence that the PSSE score engines (backends/cpu/
local.py, backends/gpu/local.py with gpu_kernels/local.cu) compute exactly and that
tests/reference_local.py implements plainly.
"""
from __future__ import annotations

from dataclasses import dataclass

from .alphabet import DNA
from .scheme import Scheme, named_matrix


@dataclass(frozen=True)
class LocalScheme(Scheme):
    """Scores of an integer local alignment (Smith-Waterman-Gotoh), maximised.

    Letter code k is alphabet[k]; subst[a][b] scores query letter code a against target
    letter code b. A gap of length k, in either sequence, costs gap_open + k * gap_extend
    (NCBI's convention). Costs are >= 0; costs and |subst| are at most MAX_COST.

    Query Q (length m) runs along the columns, target T (length n) down the rows; m or n
    may be 0. With H(i, 0) = H(0, j) = 0 and E, F of row or column 0 at minus infinity,
    for 1 <= i <= n, 1 <= j <= m:
        E(i, j) = max(E(i, j-1) - gap_extend, H(i, j-1) - gap_open - gap_extend)
        F(i, j) = max(F(i-1, j) - gap_extend, H(i-1, j) - gap_open - gap_extend)
        H(i, j) = max(0, H(i-1, j-1) + subst[Q[j-1]][T[i-1]], E(i, j), F(i, j))
    The score of the pair is the maximum of H over all cells (0 when m or n is 0): the best
    local alignment score, integer and >= 0.
    """

    family = "local"
    gap_open: int = 0
    gap_extend: int = 0

    def __post_init__(self):
        super().__post_init__()
        self._costs("gap_open", "gap_extend")

    @classmethod
    def dna(cls, match: int, mismatch: int, gap_open: int, gap_extend: int) -> LocalScheme:
        """Alphabet ACGT, `match` on the diagonal and `mismatch` elsewhere."""
        subst = tuple(tuple(match if a == b else mismatch for b in DNA) for a in DNA)
        return cls(DNA, subst, gap_open, gap_extend)

    @classmethod
    def from_matrix(cls, name: str, gap_open: int, gap_extend: int,
                    alphabet: str = "protein") -> LocalScheme:
        """A Biopython substitution matrix by name (scheme.named_matrix: its letters and
        scores) with these gap costs."""
        letters, subst = named_matrix(name, alphabet)
        return cls(letters, subst, gap_open, gap_extend)

    def max_score(self, m, n):
        """Bound on the score of a query of length m against a target of length n (NumPy
        arrays work): each of at most min(m, n) aligned pairs adds the best substitution."""
        import numpy as np

        return np.minimum(m, n) * max(0, max(map(max, self.subst)))


@dataclass(frozen=True)
class AlignMode:
    """Which alignments of a query Q against a target T `seqpairs align` maximises over,
    with a LocalScheme's scores. Every mode is LocalScheme's recurrence with other borders:

    local (Smith-Waterman-Gotoh): as LocalScheme states; any part of Q against any part of T.
    global (Needleman-Wunsch-Gotoh): no floor at 0; H(0, 0) = 0, H(i, 0) and H(0, j) the
        cost of a gap of i or j letters, negated; the score is H(n, m).
    semiglobal: all of Q against a part of T (one letter at least), T's overhangs free:
        as global, but H(i, 0) = 0 and the score is the largest H(i, m), 1 <= i <= n.

    The end is the cell holding the score; among equal cells, the smallest target end,
    then the smallest query end. The start is the first cell that reaches the score when
    the prefixes up to the end are aligned backwards from it: the shortest target span,
    then the shortest query span.
    """

    name: str
    local: bool  # floor at 0, any start and end
    free_target_ends: bool  # the target's leading and trailing letters cost nothing
    summary: str


MODES = {mode.name: mode for mode in (
    AlignMode("local", True, False, "Smith-Waterman-Gotoh: the best-scoring parts of both"),
    AlignMode("global", False, False, "Needleman-Wunsch-Gotoh: all of both, end gaps paid"),
    AlignMode("semiglobal", False, True, "all of the query against a part of the target "
              "(the target's overhangs free)"),
)}
