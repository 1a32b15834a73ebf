"""Integer affine-gap global alignment schemes (Needleman-Wunsch-Gotoh), as data.

`AffineScheme`'s docstring is the contract that the CPU (backends/cpu_affine.py) and
GPU kernels follow bit for bit, and that tests/reference_affine.py implements plainly.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from .errors import UserError
from .sequences import ALPHABET

NEG = -(1 << 30)  # score of an impossible state
# Bound on every cost and |substitution score|: a path has at most 2 * MAX_LENGTH (< 2**15)
# columns, each worth at most 2 * MAX_COST, so every real score stays far above NEG and no
# int32 arithmetic of the recurrence overflows.
MAX_COST = 10_000


@dataclass(frozen=True)
class AffineScheme:
    """Scores of an integer global alignment, maximised; all arithmetic in int32.

    subst[a][b] scores letter code a of A against code b of B (codes A=0, C=1, T=2, G=3).
    It is stored as a tuple of 4 tuples of 4 ints, so schemes hash and compare by value;
    `matrix()` gives it as an array. A gap of length k costs open + k * extend (NCBI's
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

    subst: tuple[tuple[int, ...], ...]
    gap_open: int
    gap_extend: int
    end_open: int
    end_extend: int

    def __post_init__(self):
        rows = subst_rows(self.subst)
        object.__setattr__(self, "subst", rows)
        for name in ("gap_open", "gap_extend", "end_open", "end_extend"):
            value = integer(getattr(self, name), name)
            if not 0 <= value <= MAX_COST:
                raise UserError(f"affine scheme: {name} must be between 0 and {MAX_COST}, "
                                f"got {value}")
            object.__setattr__(self, name, value)

    @classmethod
    def dna(cls, match: int, mismatch: int, gap_open: int, gap_extend: int,
            end_open: int | None = None, end_extend: int | None = None) -> AffineScheme:
        """Match/mismatch scores; end gap costs default to the interior ones."""
        subst = tuple(tuple(match if a == b else mismatch for b in range(4)) for a in range(4))
        return cls(subst, gap_open, gap_extend,
                   gap_open if end_open is None else end_open,
                   gap_extend if end_extend is None else end_extend)

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
            if integer(opening, name) < integer(extension, name.replace("open", "extend")):
                raise UserError(f"affine scheme: in usearch's convention {name} includes the "
                                f"first extension, so it must be at least the extension "
                                f"cost ({opening} < {extension})")
        return cls.dna(match, mismatch, gap_open - gap_extend, gap_extend,
                       end_open - end_extend, end_extend)

    def matrix(self) -> np.ndarray:
        """subst as a C-contiguous int32 4x4 array (a fresh copy)."""
        return np.array(self.subst, dtype=np.int32)


def integer(value, name: str, scheme: str = "affine scheme") -> int:
    """`value` as an int; UserError naming `scheme` and `name` when it is not one."""
    try:
        return operator.index(value)
    except TypeError:
        raise UserError(f"{scheme}: {name} must be an integer, got {value!r}") from None


def subst_rows(subst, alphabet: str = ALPHABET,
               scheme: str = "affine scheme") -> tuple[tuple[int, ...], ...]:
    """subst as a tuple of K tuples of K ints (K letters in `alphabet`), validated."""
    k = len(alphabet)
    shape_error = UserError(f"{scheme}: subst must be {k}x{k} (letters {alphabet})")
    try:
        rows = [list(row) for row in subst]
    except TypeError:
        raise shape_error from None
    if len(rows) != k or any(len(row) != k for row in rows):
        raise shape_error
    out = []
    for a, row in enumerate(rows):
        values = tuple(integer(v, f"subst[{alphabet[a]}]", scheme) for v in row)
        if any(abs(v) > MAX_COST for v in values):
            raise UserError(f"{scheme}: subst[{alphabet[a]}] has a score beyond +-{MAX_COST}")
        out.append(values)
    return tuple(out)
