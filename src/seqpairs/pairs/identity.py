"""Identity of an alignment by vsearch's --iddef definitions, and safe upper bounds on it
from the distance stage's per-pair counts (no traceback needed).

vsearch's definitions (iddef):
  0  CD-HIT: matches / length of the shorter sequence
  1  edit distance: matches / alignment columns
  2  edit distance excluding terminal gaps: matches / (columns - terminal gap columns)
  3  MBL: 1 - (mismatches + gap openings) / length of the longer sequence, at least 0
  4  BLAST: equal to 1 for global alignments

The distance kernels give, for the alignment they chose, `length` (SeqDist's: every
column except the free trailing end gaps), `matches`, `aligned` (columns from the first to
the last aligned pair) and `leading` (end-gap columns before the first aligned pair).
From these, iddef 0 and 2 are exact; 1, 3 and 4 get upper bounds, proved in the
comments. A pair whose bound is below the threshold cannot reach it, so only the others
need a traceback.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

IDDEFS = (0, 1, 2, 3, 4)


def _float(x):
    """x as float64, keeping its array module (NumPy or CuPy)."""
    return x.astype(np.float64) if hasattr(x, "astype") else np.float64(x)


def upper_bound(iddef: int, la, lb, length, matches, aligned, leading):
    """Upper bound (exact for iddef 0 and 2) on the identity of each pair's alignment.

    Works on NumPy or CuPy arrays (ufuncs and operators only).
    """
    la, lb, length = _float(la), _float(lb), _float(length)
    m, aligned, leading = _float(matches), _float(aligned), _float(leading)
    shorter, longer = np.minimum(la, lb), np.maximum(la, lb)
    # Every residue is in an aligned pair or a gap column, so with s mismatches and gi
    # internal gap columns (s + gi = aligned - m): columns = la + lb - m - s
    # >= la + lb - aligned.
    min_columns = np.maximum(length, la + lb - aligned)
    if iddef == 0:
        return m / shorter  # exact
    if iddef in (1, 4):
        return m / min_columns
    if iddef == 2:
        # columns without end gaps are exactly `aligned`; no aligned pair at all: 0
        return (aligned > 0) * m / np.maximum(aligned, 1)
    if iddef == 3:
        # mismatches + gap openings >= [s + gi > 0] + [leading gaps] + [trailing gaps];
        # trailing gap columns = columns - aligned - leading >= min_columns - aligned - leading
        events = (np.minimum(aligned - m, 1) + (leading > 0)
                  + (min_columns - aligned - leading > 0))
        return np.maximum(0.0, 1.0 - events / longer)
    raise ValueError(f"iddef must be one of {IDDEFS}, not {iddef}")


def screen_bound(iddef: int, la, lb, length, matches, pairs):
    """Upper bound on upper_bound() from the GPU screen's counts: `pairs` (aligned pairs)
    instead of `aligned` and `leading`.

    Columns from the first to the last aligned pair hold every aligned pair, so
    aligned >= pairs; each bound below is upper_bound's with that put in.
    """
    la, lb, length = _float(la), _float(lb), _float(length)
    m, pairs = _float(matches), _float(pairs)
    if iddef == 0:
        return m / np.minimum(la, lb)
    if iddef in (1, 4):  # min_columns >= length
        return m / length
    if iddef == 2:  # m / aligned <= m / pairs; no aligned pair at all: 0
        return (pairs > 0) * m / np.maximum(pairs, 1)
    if iddef == 3:  # events >= min(aligned - m, 1) >= min(pairs - m, 1)
        return np.maximum(0.0, 1.0 - np.minimum(pairs - m, 1) / np.maximum(la, lb))
    raise ValueError(f"iddef must be one of {IDDEFS}, not {iddef}")


def identity(iddef: int, matches, mismatches, columns, terminal_gaps, openings, la, lb) -> float:
    """Exact identity of a traced alignment (counts over its columns)."""
    if iddef == 0:
        return matches / min(la, lb)
    if iddef in (1, 4):
        return matches / columns
    if iddef == 2:
        inner = columns - terminal_gaps
        return matches / inner if inner else 0.0
    if iddef == 3:
        return max(0.0, 1.0 - (mismatches + openings) / max(la, lb))  # vsearch clamps at 0
    raise ValueError(f"iddef must be one of {IDDEFS}, not {iddef}")


def vsearch_percent(iddef: int, matches, mismatches, columns, terminal_gaps, openings, la, lb):
    """Identity in percent by iddef, with vsearch's own floating-point arithmetic (align_trim
    in its searchcore.cc), so that values print and compare with --id exactly as vsearch's.

    Arguments are NumPy (or CuPy) integer arrays of counts over each alignment (terminal gaps as
    vsearch trims them, backends/cpu/trace_affine.py); returns float64 percentages. vsearch writes
    100.0 * matches / length (not 100 * (matches / length)), and a pair passes --id T when
    that is >= 100.0 * T.
    """
    m = _float(matches)
    if iddef == 0:
        return 100.0 * m / np.minimum(la, lb)
    if iddef in (1, 4):
        return 100.0 * m / columns
    if iddef == 2:
        inner = columns - terminal_gaps
        return (inner > 0) * (100.0 * m / np.maximum(inner, 1))
    if iddef == 3:
        events = _float(mismatches) + openings
        return np.maximum(0.0, 100.0 * (1.0 - events / np.maximum(la, lb)))
    raise ValueError(f"iddef must be one of {IDDEFS}, not {iddef}")


# Below every threshold by far more than float64's rounding of vsearch_percent's tests
# (a few units in 2^-53), so that a pair the tests keep is never screened out.
SCREEN_MARGIN = 1e-9


@dataclass(frozen=True)
class AffineScreen:
    """The exact screen of an affine pass at one identity threshold (docs/pruning.md,
    "Affine schemes"): W, the largest alpha x matches - beta x mismatches among a pair's
    alignments of optimal score (backend.affine_screen), is at least `least(la, lb)` for
    every pair whose traced alignment reaches the threshold by iddef."""

    iddef: int
    threshold: float  # the identity reached, minus SCREEN_MARGIN
    alpha: int
    beta: int

    @classmethod
    def at(cls, iddef: int, identity: float, longest: int) -> AffineScreen | None:
        """The screen of `identity` by iddef, its weights at most (2^15 - 1) // longest
        (the GPU's 16-bit weights); None where every pair may reach it."""
        t = identity - SCREEN_MARGIN
        if t <= 0:
            return None
        if iddef == 0:  # matches >= t x shorter
            return cls(iddef, t, 1, 0)
        if iddef == 3:  # mismatches <= mismatches + openings <= (1 - t) x longer
            return cls(iddef, t, 0, 1)
        # matches >= t (matches + mismatches): alpha m - beta x >= 0 for beta / alpha <= t /
        # (1 - t); the closest such ratio within the cap (a lower ratio only screens less)
        cap = (2**15 - 1) // max(longest, 1)
        ratio = t / (1 - t) if t < 1 else math.inf
        alpha, beta = max(((a, min(cap, math.floor(a * ratio))) for a in range(1, cap + 1)),
                          key=lambda w: (w[1] / w[0], -w[0]))
        return cls(iddef, t, alpha, beta)

    def least(self, shorter, longer):
        """The least W of a pair of these lengths (arrays of any array module) that may
        reach the threshold."""
        if self.iddef == 0:
            return self.threshold * shorter
        if self.iddef == 3:
            return -(1 - self.threshold) * longer
        return 0
