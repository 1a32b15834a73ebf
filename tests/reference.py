"""Pure-Python reference of the SeqDist alignment, written from docs/seqdist.md, full matrix
with traceback.

Slow and plain on purpose: it defines the semantics that the Numba and CUDA kernels must
reproduce bit for bit. Letters are plain strings over ACGT.
"""
from __future__ import annotations

SUBST = {
    "A": {"A": 0.0, "C": 11.619259, "T": 11.694004, "G": 7.748623},
    "C": {"A": 11.619259, "C": 0.0, "T": 7.619657, "G": 12.852562},
    "T": {"A": 11.694004, "C": 7.619657, "T": 0.0, "G": 10.964048},
    "G": {"A": 7.748623, "C": 12.852562, "T": 10.964048, "G": 0.0},
}
GAP, HOMOPOLYMER = 15.0, 4.0
DIAG, LEFT, UP = "D", "L", "U"


def align(a: str, b: str):
    """Return (H, L, moves) full matrices for A=a (rows) and B=b (columns)."""
    la, lb = len(a), len(b)
    H = [[0.0] * (lb + 1) for _ in range(la + 1)]
    L = [[0] * (lb + 1) for _ in range(la + 1)]
    mv = [[None] * (lb + 1) for _ in range(la + 1)]
    for i in range(la + 1):
        H[i][0], L[i][0], mv[i][0] = GAP * i, i, UP
    for j in range(1, lb + 1):
        H[0][j], L[0][j], mv[0][j] = GAP * j, j, LEFT
    for i in range(1, la + 1):
        for j in range(1, lb + 1):
            prev = mv[i][j - 1]
            if prev == DIAG:
                last = a[i - 1] if j >= 2 and a[i - 1] == b[j - 2] else None
            elif prev == LEFT:
                last = b[j - 2]
            else:
                last = a[i - 1]
            g = HOMOPOLYMER if b[j - 1] == last else GAP
            c1 = H[i - 1][j - 1] + SUBST[a[i - 1]][b[j - 1]]
            c2 = H[i][j - 1] if i == la else H[i][j - 1] + g
            c3 = H[i - 1][j] if j == lb else H[i - 1][j] + g
            if c1 < c2:
                m = DIAG if c1 < c3 else UP
            else:
                m = LEFT if c2 < c3 else UP
            mv[i][j] = m
            if m == DIAG:
                H[i][j], L[i][j] = c1, L[i - 1][j - 1] + 1
            elif m == LEFT:
                H[i][j], L[i][j] = c2, L[i][j - 1] + (0 if i == la else 1)
            else:
                H[i][j], L[i][j] = c3, L[i - 1][j] + (0 if j == lb else 1)
    return H, L, mv


def columns(a: str, b: str, mv):
    """Trace back from (la, lb): list of (char_a or '-', char_b or '-'), start to end."""
    i, j, cols = len(a), len(b), []
    while i > 0 or j > 0:
        m = mv[i][j]
        if m == DIAG:
            cols.append((a[i - 1], b[j - 1]))
            i, j = i - 1, j - 1
        elif m == LEFT:
            cols.append(("-", b[j - 1]))
            j -= 1
        else:
            cols.append((a[i - 1], "-"))
            i -= 1
    cols.reverse()
    return cols


def seqdist(a: str, b: str):
    """(cost, length, matches, columns) of the SeqDist alignment of A=a against B=b."""
    H, L, mv = align(a, b)
    cols = columns(a, b, mv)
    matches = sum(1 for x, y in cols if x == y != "-")
    return H[len(a)][len(b)], L[len(a)][len(b)], matches, cols


def distance(a: str, b: str) -> float:
    cost, length, _, _ = seqdist(a, b)
    return cost / length


def all_pairs(seqs):
    """SeqDist order: (1,0), (2,0), (2,1), ...; sequence i is A, j is B."""
    return [distance(seqs[i], seqs[j]) for i in range(1, len(seqs)) for j in range(i)]
