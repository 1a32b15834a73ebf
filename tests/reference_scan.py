"""Pure-Python reference of `seqpairs scan`'s hits from pairs/scan.py's definition: the
full local matrix (reference_align.matrices), each row's best score and first query end,
the peaks by brute force over each window, the best `top` of them, and each hit's start
as reference_align finds starts (the shortest target span, then the shortest query span
whose global alignment reaches the score). Slow on purpose: short sequences only."""
from __future__ import annotations

import numpy as np

from reference_align import _codes, global_score, matrices
from seqpairs.scoring import LocalScheme


def row_bests(q, t, scheme: LocalScheme):
    """[(s(i), q(i)) for rows i = 1..n]: the row's best H and the first column holding it
    (0 and 0 for a row without a positive cell)."""
    H = matrices(q, t, scheme, True, False)
    out = []
    for i in range(1, len(t) + 1):
        best = max(H[i][1:], default=0)
        out.append((best, H[i].index(best, 1) if best > 0 else 0))
    return out


def hits(query, target, scheme: LocalScheme, top: int, min_score: int = 1,
         half: int | None = None):
    """[(score, qstart, qend, tstart, tend)], best first, then the earlier target end."""
    q, t = _codes(query, scheme), _codes(target, scheme)
    half = len(q) if half is None else half
    rows = row_bests(q, t, scheme)
    n = len(t)
    peaks = []
    for c in range(1, n + 1):
        window = [rows[x - 1][0] for x in range(max(1, c - half), min(n, c + half) + 1)]
        first = max(1, c - half) + window.index(max(window))
        if first == c and rows[c - 1][0] >= max(min_score, 1):
            peaks.append((rows[c - 1][0], c, rows[c - 1][1]))
    peaks.sort(key=lambda p: (-p[0], p[1]))
    out = []
    for score, tend, qend in peaks[:top]:
        qstart, tstart = _start(q, t, scheme, score, qend, tend)
        out.append((score, qstart, qend, tstart, tend))
    return out


def _start(q, t, scheme, score, qend, tend):
    """(qstart, tstart) of the hit: the shortest target span, then the shortest query span."""
    for tstart in range(tend, 0, -1):
        for qstart in range(qend, 0, -1):
            if global_score(q[qstart - 1:qend], t[tstart - 1:tend], scheme) == score:
                return qstart, tstart
    raise AssertionError("no start reaches the score")


def planted(rng, k, query, n, copies):
    """A random target of n letters with `copies` mutated copies of the query in it."""
    t = rng.integers(0, k, n).astype(np.uint8)
    for _ in range(copies):
        copy = query.copy()
        hit = rng.random(len(copy)) < 0.15
        copy[hit] = rng.integers(0, k, hit.sum())
        if rng.random() < 0.5:  # a gap in it
            cut = int(rng.integers(1, len(copy)))
            copy = np.r_[copy[:cut], copy[cut + int(rng.integers(1, 4)):]]
        at = int(rng.integers(0, max(1, n - len(copy))))
        t[at:at + len(copy)] = copy[:n - at]
    return t
