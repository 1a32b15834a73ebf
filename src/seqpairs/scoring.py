"""Scoring schemes as data.

`seqdist` is AmpliconNoise's SeqDist cost model (Data/Tran.dat, gap 15, homopolymer gap 4),
indexed A=0, C=1, T=2, G=3. Lower is better; all costs are IEEE doubles.
"""
from __future__ import annotations

import numpy as np

SEQDIST_SUBST = np.array(
    [
        [0.0, 11.619259, 11.694004, 7.748623],
        [11.619259, 0.0, 7.619657, 12.852562],
        [11.694004, 7.619657, 0.0, 10.964048],
        [7.748623, 12.852562, 10.964048, 0.0],
    ],
    dtype=np.float64,
)
SEQDIST_GAP = 15.0
SEQDIST_HOMOPOLYMER_GAP = 4.0

SCHEMES = ("seqdist",)
