"""Scoring schemes as data.

`seqdist` is AmpliconNoise's SeqDist cost model (Data/Tran.dat, gap 15, homopolymer gap 4),
indexed A=0, C=1, T=2, G=3. Lower is better; all costs are IEEE doubles.

`vsearch` is vsearch's default global alignment scoring (`--match 2 --mismatch -4
--gapopen 20I/2E --gapext 2I/1E`) as an integer AffineScheme (affine.py; higher is better).
vsearch charges a gap of k columns open + (k - 1) * extend (usearch's convention, checked
against vsearch 2.22.1's `raw` score on hand-made pairs, tests/test_vsearch.py), which is
AffineScheme's open + k * extend with open 18 inside and 1 at the ends. vsearch's ends are
AffineScheme's: horizontal gaps on the first and last row, vertical gaps on the first and
last column. The filter traces it with vsearch's tie rules (traceback_affine.py).
"""
from __future__ import annotations

import numpy as np

from .affine import AffineScheme

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

# vsearch's defaults: a gap of k columns costs 20 + 2 (k - 1) inside, 2 + (k - 1) at an end
VSEARCH = AffineScheme.usearch(match=2, mismatch=-4, gap_open=20, gap_extend=2,
                               end_open=2, end_extend=1)

# the integer affine schemes among SCHEMES, by name
AFFINE = {"vsearch": VSEARCH}
SCHEMES = ("seqdist", *AFFINE)
