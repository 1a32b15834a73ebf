"""Integer affine-gap global alignment schemes (Needleman-Wunsch-Gotoh), as data.

`AffineScheme`'s docstring is the contract that the CPU (backends/cpu/affine.py) and GPU
(gpu_kernels/affine.cu) kernels follow bit for bit, and that tests/reference_affine.py
implements plainly.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from .alphabet import DNA
from .scheme import Scheme, integer, named_matrix

NEG = -(1 << 30)  # score of an impossible state; every real score stays far above it


@dataclass(frozen=True)
class AffineScheme(Scheme):
    """Scores of an integer global alignment, maximised; all arithmetic in int32.

    Any alphabet (DNA's ACGT, a named matrix's letters: from_matrix); subst[a][b] scores
    letter code a of A against code b of B. A gap of length k costs open + k * extend (NCBI's
    convention; linear gaps: open 0), with `gap_*` inside the alignment and `end_*` for
    terminal gaps. All costs are >= 0; costs and |subst| are at most MAX_COST.

    A (length la >= 1) runs down the rows, B (lb >= 1) along the columns. Result of a
    pair: the best score of a global alignment, and the length (columns) of the shortest
    alignment with that score. Computed by Gotoh's recurrence on values (score, length)
    ordered by score and, at equal scores, the shorter length first ("best" below); the
    order is total and adding a step preserves it, so the recurrence yields exactly that
    result, whatever order it compares in (no tie rule). Cell (i, j), 0 <= i <= la,
    0 <= j <= lb, has three states: H (best), E (ends with B[j-1] against a gap,
    horizontal), F (ends with A[i-1] against a gap, vertical).
      Gap costs: row i's horizontal (oh, eh) = (end_open, end_extend) if i in (0, la),
      else (gap_open, gap_extend); column j's vertical (ov, ev) likewise with j in (0, lb).
      Borders: H(0,0) = (0, 0). j >= 1: H(0,j) = E(0,j) = (-(end_open + j*end_extend), j),
      F(0,j) = (NEG, 0). i >= 1: H(i,0) = F(i,0) = (-(end_open + i*end_extend), i),
      E(i,0) = (NEG, 0). NEG = -(1 << 30).
      Interior (i, j >= 1), each step adding one column:
        E = best of H(i,j-1) - oh - eh and E(i,j-1) - eh;
        F = best of H(i-1,j) - ov - ev and F(i-1,j) - ev;
        D = H(i-1,j-1) + subst[A[i-1]][B[j-1]];
        H = best of D, E, F.
    Result: H(la,lb).
    """

    family = "affine"
    gap_open: int = 0
    gap_extend: int = 0
    end_open: int = 0
    end_extend: int = 0

    def __post_init__(self):
        super().__post_init__()
        self._costs("gap_open", "gap_extend", "end_open", "end_extend")

    @classmethod
    def dna(cls, match: int, mismatch: int, gap_open: int, gap_extend: int,
            end_open: int | None = None, end_extend: int | None = None) -> AffineScheme:
        """Match/mismatch scores; end gap costs default to the interior ones."""
        subst = tuple(tuple(match if a == b else mismatch for b in DNA) for a in DNA)
        return cls(DNA, subst, gap_open, gap_extend,
                   gap_open if end_open is None else end_open,
                   gap_extend if end_extend is None else end_extend)

    @classmethod
    def from_matrix(cls, name: str, gap_open: int, gap_extend: int,
                    alphabet: str = "protein") -> AffineScheme:
        """A Biopython substitution matrix by name (scheme.named_matrix), end gaps costing
        as much as inner ones (parasail's nw)."""
        letters, subst = named_matrix(name, alphabet)
        return cls(letters, subst, gap_open, gap_extend, gap_open, gap_extend)

    @classmethod
    def usearch(cls, match: int, mismatch: int, gap_open: int, gap_extend: int,
                end_open: int, end_extend: int) -> AffineScheme:
        """Match/mismatch scores and gap costs in usearch's and vsearch's convention.

        There a gap of k columns costs open + (k - 1) * extend (the opening includes the
        first column; vsearch 2.22.1 charges exactly that, checked with its `raw` userout
        field), i.e. NCBI's open + k * extend with open - extend. vsearch's `I` (interior)
        costs are gap_*, its `E` (both ends, query and target alike) costs are end_*.
        """
        for name, opening, extension in (("gap_open", gap_open, gap_extend),
                                         ("end_open", end_open, end_extend)):
            if (integer(opening, name, "affine scheme")
                    < integer(extension, name.replace("open", "extend"), "affine scheme")):
                raise UserError(f"affine scheme: in usearch's convention {name} includes the "
                                f"first extension, so it must be at least the extension "
                                f"cost ({opening} < {extension})")
        return cls.dna(match, mismatch, gap_open - gap_extend, gap_extend,
                       end_open - end_extend, end_extend)

    def score_bounds(self, max_len: int) -> tuple[int, int]:
        """(lowest, highest): bounds on every value the recurrence computes for sequences
        of up to max_len letters, and on one step beyond.

        A path of diagonal steps and then one gap reaches every cell, so no H is below
        -(worst substitution + extension) * max_len - opening; E, F and the intermediate
        sums are at most a few steps lower, and nothing is above best substitution *
        (max_len + 1).
        """
        worst = max(0, -min(map(min, self.subst)))
        best = max(0, max(map(max, self.subst)))
        opening = max(self.gap_open, self.end_open)
        extension = max(self.gap_extend, self.end_extend)
        return (-((worst + extension) * max_len + 3 * (opening + extension + worst)),
                best * (max_len + 1))
