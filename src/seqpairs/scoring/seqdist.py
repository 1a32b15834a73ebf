"""AmpliconNoise's SeqDist costs as a scheme: the recurrence that docs/seqdist.md states and
every SeqDist kernel follows bit for bit (backends/cpu/seqdist.py, gpu_kernels/seqdist.cu)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UserError
from ..limits import MAX_LENGTH
from .alphabet import DNA
from .scheme import Scheme, subst_rows

# The lower band's units (SeqDistScheme.lower_weights), also the upper bounds'
# (upper_weights, scaled up by UPPER_GROW), whose sums stay below UPPER_LIMIT units (the
# GPU's int32 cells, with room above for the cells outside the band).
LOWER_UNITS, LOWER_SHRINK = 64, 1.0 - 2.0**-30
UPPER_GROW, UPPER_LIMIT = 1.0 + 2.0**-30, 1 << 29

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

    # Bounds of the costs that exact pruning builds on (pairs/prune.py, docs/pruning.md).
    @property
    def cheapest_gap(self) -> float:
        """The least cost of a gap column that is not a free trailing one."""
        return min(self.gap, self.homopolymer_gap)

    @property
    def dearest_gap(self) -> float:
        """The most a gap column can cost."""
        return max(self.gap, self.homopolymer_gap)

    @property
    def cheapest_gap_shrunk(self) -> float:
        """cheapest_gap scaled down by 2^-40: a lower bound per paid gap column that no
        rounding of the recurrence's sums can fall below, whatever the costs (the banded
        kernels' bound outside the band)."""
        return self.cheapest_gap * (1.0 - 2.0**-40)

    @property
    def lower_weights(self) -> tuple:
        """The banded kernels' lower band's weights (docs/pruning.md) in integer units of
        1 / LOWER_UNITS, each cost scaled down by LOWER_SHRINK and rounded down:
        (substitutions as rows of subst, (the plain gap: a border letter's and a paid gap's
        that cannot extend a homopolymer, the cheapest paid gap)) whose sums are exact and
        stay below the recurrence's, whatever its rounding (paths of at most 2 x
        limits.MAX_LENGTH moves: relatively under 2^-38)."""
        def units(cost):
            return math.floor(cost * LOWER_SHRINK * LOWER_UNITS)
        return (tuple(tuple(units(c) for c in row) for row in self.subst),
                (units(self.gap), units(self.cheapest_gap)))

    @property
    def upper_weights(self) -> tuple:
        """The upper bounds' weights (backend.seqdist_upper, docs/pruning.md) in integer
        units of 1 / LOWER_UNITS, each cost scaled up by UPPER_GROW and rounded up:
        (substitutions as rows of subst, (the plain gap, the dearest gap)) whose sums are
        exact and stay above the recurrence's, whatever its rounding. A path of
        2 x limits.MAX_LENGTH moves of the dearest weight stays below UPPER_LIMIT units."""
        def units(cost):
            return math.ceil(cost * UPPER_GROW * LOWER_UNITS)
        weights = (tuple(tuple(units(c) for c in row) for row in self.subst),
                   (units(self.gap), units(self.dearest_gap)))
        dearest = max(max(max(row) for row in weights[0]), *weights[1])
        if dearest * 2 * MAX_LENGTH >= UPPER_LIMIT:
            raise UserError(f"{self.describe()}: costs above "
                            f"{UPPER_LIMIT / (2 * MAX_LENGTH * LOWER_UNITS):.0f} are more than "
                            "exact pruning's upper bounds hold")
        return weights

    @property
    def cheapest_edit(self) -> float:
        """The least cost of a mismatch or of a gap column that is not a free trailing one."""
        mismatches = [c for a, row in enumerate(self.subst) for b, c in enumerate(row) if a != b]
        return min([self.cheapest_gap, *mismatches])

