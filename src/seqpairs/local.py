"""Integer Smith-Waterman local alignment with affine gaps (Gotoh), as data.

`LocalScheme`'s docstring is the recurrence that the PSSE score engines (backends/
cpu_local.py, backends/gpu_local.py with gpu_kernels/local.cu) compute exactly and that
tests/reference_local.py implements plainly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .affine import MAX_COST, integer, subst_rows
from .errors import UserError

DNA = "ACGT"
# The 20 standard amino acids in the order of the BLOSUM/PAM tables.
AMINO_ACIDS = "ARNDCQEGHILKMFPSTWYV"
# Standard letters of each `LocalScheme.matrix` alphabet; they take the first codes.
STANDARD = {"protein": AMINO_ACIDS, "dna": DNA}
MAX_LETTERS = 255  # codes are uint8; the GPU kernel uses one more code for padding


@dataclass(frozen=True)
class LocalScheme:
    """Scores of an integer local alignment (Smith-Waterman-Gotoh), maximised.

    Letter code k is alphabet[k]; subst[a][b] scores query letter code a against target
    letter code b (a tuple of K tuples of K ints, so schemes hash and compare by value;
    `matrix_array()` gives it as an array). A gap of length k, in either sequence, costs
    gap_open + k * gap_extend (NCBI's convention). Costs are >= 0; costs and |subst| are
    at most MAX_COST.

    Query Q (length m) runs along the columns, target T (length n) down the rows; m or n
    may be 0. With H(i, 0) = H(0, j) = 0 and E, F of row or column 0 at minus infinity,
    for 1 <= i <= n, 1 <= j <= m:
        E(i, j) = max(E(i, j-1) - gap_extend, H(i, j-1) - gap_open - gap_extend)
        F(i, j) = max(F(i-1, j) - gap_extend, H(i-1, j) - gap_open - gap_extend)
        H(i, j) = max(0, H(i-1, j-1) + subst[Q[j-1]][T[i-1]], E(i, j), F(i, j))
    The score of the pair is the maximum of H over all cells (0 when m or n is 0): the best
    local alignment score, integer and >= 0.
    """

    alphabet: str
    subst: tuple[tuple[int, ...], ...]
    gap_open: int
    gap_extend: int

    def __post_init__(self):
        alphabet = self.alphabet
        if (not isinstance(alphabet, str) or not 1 <= len(alphabet) <= MAX_LETTERS
                or len(set(alphabet)) != len(alphabet) or alphabet != alphabet.upper()
                or not alphabet.isascii() or not alphabet.isprintable() or " " in alphabet):
            raise UserError(f"local scheme: the alphabet must be 1 to {MAX_LETTERS} distinct "
                            f"upper-case ASCII letters, got {alphabet!r}")
        object.__setattr__(self, "subst", subst_rows(self.subst, alphabet, "local scheme"))
        for name in ("gap_open", "gap_extend"):
            value = integer(getattr(self, name), name, "local scheme")
            if not 0 <= value <= MAX_COST:
                raise UserError(f"local scheme: {name} must be between 0 and {MAX_COST}, "
                                f"got {value}")
            object.__setattr__(self, name, value)

    @classmethod
    def dna(cls, match: int, mismatch: int, gap_open: int, gap_extend: int) -> LocalScheme:
        """Alphabet ACGT, `match` on the diagonal and `mismatch` elsewhere."""
        subst = tuple(tuple(match if a == b else mismatch for b in range(4)) for a in range(4))
        return cls(DNA, subst, gap_open, gap_extend)

    @classmethod
    def matrix(cls, name: str, gap_open: int, gap_extend: int,
               alphabet: str = "protein") -> LocalScheme:
        """A Biopython substitution matrix by name (Bio.Align.substitution_matrices.load).

        alphabet "protein": codes 0-19 are the standard amino acids ARNDCQEGHILKMFPSTWYV,
        then the matrix's other letters in its own order (BLOSUM62: B Z X *); "dna":
        codes 0-3 are ACGT, then the matrix's other letters (NUC.4.4: S W R Y K M B V H D N).
        The matrix must score every standard letter and hold integers only.
        """
        from Bio.Align import substitution_matrices

        standard = STANDARD.get(alphabet)
        if standard is None:
            raise UserError(f"local scheme: alphabet must be one of {', '.join(STANDARD)}, "
                            f"got {alphabet!r}")
        try:
            table = substitution_matrices.load(name)
        except (FileNotFoundError, ValueError, TypeError):
            raise UserError(f"unknown substitution matrix {name!r}; available: "
                            f"{', '.join(substitution_matrices.load())}") from None
        letters = table.alphabet
        if not isinstance(letters, str) or table.ndim != 2:
            raise UserError(f"substitution matrix {name} does not score single letters")
        missing = [c for c in standard if c not in letters]
        if missing:
            raise UserError(f"substitution matrix {name} has no score for {''.join(missing)}, "
                            f"so it cannot score the {alphabet} alphabet")
        order = standard + "".join(c for c in letters if c not in standard)
        values = np.array([[table[a, b] for b in order] for a in order])
        if not np.array_equal(values, np.round(values)):
            raise UserError(f"substitution matrix {name} has non-integer scores")
        subst = tuple(tuple(int(v) for v in row) for row in values)
        return cls(order, subst, gap_open, gap_extend)

    def encode(self, sequence: str, where: str) -> np.ndarray:
        """Letter codes (uint8) of `sequence`, upper-cased; UserError naming `where` and the
        first letter outside the alphabet."""
        if sequence.isascii():
            codes = self._codes()[np.frombuffer(sequence.upper().encode("ascii"), dtype=np.uint8)]
            if not (codes == 255).any():
                return codes
        letter = next(c for c in sequence if not c.isascii() or c.upper() not in self.alphabet)
        raise UserError(f"{where}: letter {letter!r} is not in the {self.alphabet} alphabet")

    def matrix_array(self) -> np.ndarray:
        """subst as a C-contiguous int32 K x K array (a fresh copy)."""
        return np.array(self.subst, dtype=np.int32)

    def _codes(self) -> np.ndarray:
        """Byte -> code table (255: not in the alphabet)."""
        table = np.full(256, 255, dtype=np.uint8)
        table[np.frombuffer(self.alphabet.encode("ascii"), dtype=np.uint8)] = np.arange(
            len(self.alphabet))
        return table
