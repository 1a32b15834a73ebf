"""What every scoring scheme is: an alphabet and a substitution table over its codes, plus
the gap costs of its family (seqdist.py, affine.py, local.py). Schemes are frozen value
types: they hash and compare by value, validate themselves and state their own bounds."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import ClassVar

from ..errors import UserError
from . import alphabet as letters
from .alphabet import AMINO_ACIDS, DNA

# Standard letters of each named matrix's alphabet; they take the first codes.
STANDARD = {"protein": AMINO_ACIDS, "dna": DNA}

# Bound on every integer cost and |substitution score|: a path has at most 2 * 16,383
# (< 2**15) columns, each worth at most 2 * MAX_COST, so the integer recurrences stay
# far inside int32.
MAX_COST = 10_000


@dataclass(frozen=True)
class Scheme:
    """alphabet: letter k has code k (scoring/alphabet.py); subst[a][b]: the score (or
    cost) of code a of the first sequence against code b of the second, a tuple of K
    tuples of K numbers (K letters). Subclasses add their gap costs and `family`."""

    family: ClassVar[str]
    alphabet: str
    subst: tuple[tuple, ...]

    def __post_init__(self):
        letters.check(self.alphabet, self.describe())
        object.__setattr__(self, "subst", self._table(self.subst))

    @classmethod
    def describe(cls) -> str:
        return f"{cls.family} scheme"

    def _table(self, subst) -> tuple[tuple, ...]:
        """subst validated as K tuples of K integers within MAX_COST (SeqDist: floats)."""
        return subst_rows(subst, self.alphabet, self.describe())

    def _costs(self, *names: str) -> None:
        """Validate the integer costs `names`: 0 <= cost <= MAX_COST."""
        for name in names:
            value = integer(getattr(self, name), name, self.describe())
            if not 0 <= value <= MAX_COST:
                raise UserError(f"{self.describe()}: {name} must be between 0 and {MAX_COST}, "
                                f"got {value}")
            object.__setattr__(self, name, value)

    def matrix(self, dtype="int32"):
        """subst as a C-contiguous K x K NumPy array (a fresh copy)."""
        import numpy as np

        return np.array(self.subst, dtype=dtype)

    def encode(self, sequence: str, where: str):
        """Codes (uint8) of `sequence`, upper-cased; UserError naming `where` and the first
        letter outside the alphabet."""
        return letters.encode(sequence, self.alphabet, where)


def integer(value, name: str, scheme: str) -> int:
    """`value` as an int; UserError naming `scheme` and `name` when it is not one."""
    try:
        return operator.index(value)
    except TypeError:
        raise UserError(f"{scheme}: {name} must be an integer, got {value!r}") from None


def subst_rows(subst, alphabet: str, scheme: str, number=integer) -> tuple[tuple, ...]:
    """subst as a tuple of K tuples of K numbers (K letters in `alphabet`), each read by
    `number(value, name, scheme)` and within +-MAX_COST."""
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
        values = tuple(number(v, f"subst[{alphabet[a]}]", scheme) for v in row)
        if any(abs(v) > MAX_COST for v in values):
            raise UserError(f"{scheme}: subst[{alphabet[a]}] has a score beyond +-{MAX_COST}")
        out.append(values)
    return tuple(out)


def named_matrix(name: str, alphabet: str = "protein") -> tuple[str, tuple[tuple, ...]]:
    """(letters, subst) of a Biopython substitution matrix by name
    (Bio.Align.substitution_matrices.load).

    alphabet "protein": codes 0-19 are the standard amino acids ARNDCQEGHILKMFPSTWYV, then
    the matrix's other letters in its own order (BLOSUM62: B Z X *); "dna": codes 0-3 are
    ACGT, then the matrix's other letters (NUC.4.4: S W R Y K M B V H D N). The matrix must
    score every standard letter and hold integers only.
    """
    from Bio.Align import substitution_matrices

    standard = STANDARD.get(alphabet)
    if standard is None:
        raise UserError(f"substitution matrix {name}: alphabet must be one of "
                        f"{', '.join(STANDARD)}, got {alphabet!r}")
    try:
        table = substitution_matrices.load(name)
    except (FileNotFoundError, ValueError, TypeError):
        raise UserError(f"unknown substitution matrix {name!r}; available: "
                        f"{', '.join(substitution_matrices.load())}") from None
    found = table.alphabet
    if not isinstance(found, str) or table.ndim != 2:
        raise UserError(f"substitution matrix {name} does not score single letters")
    missing = [c for c in standard if c not in found]
    if missing:
        raise UserError(f"substitution matrix {name} has no score for {''.join(missing)}, "
                        f"so it cannot score the {alphabet} alphabet")
    order = standard + "".join(c for c in found if c not in standard)
    values = [[table[a, b] for b in order] for a in order]
    if any(v != round(v) for row in values for v in row):
        raise UserError(f"substitution matrix {name} has non-integer scores")
    return order, tuple(tuple(int(v) for v in row) for row in values)
