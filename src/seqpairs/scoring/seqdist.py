"""AmpliconNoise's SeqDist costs as a scheme: the recurrence that docs/seqdist.md states and
every SeqDist kernel follows bit for bit (backends/cpu/seqdist.py, gpu_kernels/seqdist.cu)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from .alphabet import DNA
from .scheme import Scheme, subst_rows

# AmpliconNoise's Data/Tran.dat by letter pair (symmetric, 0 on the diagonal); the
# spec's table is indexed A, C, T, G, the scheme's subst in the one encoding's order.
TRAN_DAT = {"AC": 11.619259, "AT": 11.694004, "AG": 7.748623, "CT": 7.619657,
            "CG": 12.852562, "TG": 10.964048}


def _cost(value, name: str, scheme: str) -> float:
    """A cost as a float >= 0 (costs are IEEE doubles: the kernels add them as given)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise UserError(f"{scheme}: {name} must be a number >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SeqDistScheme(Scheme):
    """SeqDist's costs, minimised, all IEEE doubles: subst[a][b] the cost of letter code a
    of A against code b of B, `gap` the cost of a gap column and `homopolymer_gap` the
    cost of one that extends a homopolymer (docs/seqdist.md). Per pair the kernels return
    the cost and the counts of the chosen path; distance = cost / length."""

    family = "seqdist"
    gap: float = 15.0
    homopolymer_gap: float = 4.0

    def __post_init__(self):
        super().__post_init__()
        for name in ("gap", "homopolymer_gap"):
            object.__setattr__(self, name, _cost(getattr(self, name), name, self.describe()))

    def _table(self, subst):
        return subst_rows(subst, self.alphabet, self.describe(), _cost)

    @classmethod
    def amplicon_noise(cls) -> SeqDistScheme:
        """AmpliconNoise's own costs: Tran.dat, gap 15, homopolymer gap 4."""
        subst = tuple(tuple(0.0 if a == b else TRAN_DAT.get(a + b, TRAN_DAT.get(b + a))
                            for b in DNA) for a in DNA)
        return cls(DNA, subst)

    def matrix(self, dtype="float64"):
        return super().matrix(dtype)

