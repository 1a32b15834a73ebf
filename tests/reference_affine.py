"""Pure-Python reference of the affine global alignment, full matrices, from AffineScheme's spec.

Slow and plain on purpose: it defines the semantics that the Numba and CUDA kernels must
reproduce bit for bit. Letters are plain strings over ACGT; Python ints never overflow, so
the kernels' int32 arithmetic must agree with it exactly.
"""
from __future__ import annotations

from seqpairs.affine import NEG, AffineScheme
from seqpairs.sequences import ALPHABET


def matrices(a: str, b: str, scheme: AffineScheme):
    """Full (H, LH, E, LE, F, LF) matrices for A=a (rows) and B=b (columns)."""
    la, lb = len(a), len(b)
    subst = scheme.subst

    def grid(value):
        return [[value] * (lb + 1) for _ in range(la + 1)]

    H, LH, E, LE, F, LF = grid(0), grid(0), grid(0), grid(0), grid(0), grid(0)

    def row_costs(i):  # horizontal gaps on row i
        if i == 0 or i == la:
            return scheme.end_open, scheme.end_extend
        return scheme.gap_open, scheme.gap_extend

    def col_costs(j):  # vertical gaps on column j
        if j == 0 or j == lb:
            return scheme.end_open, scheme.end_extend
        return scheme.gap_open, scheme.gap_extend

    for j in range(1, lb + 1):
        H[0][j] = E[0][j] = -(scheme.end_open + j * scheme.end_extend)
        LH[0][j] = LE[0][j] = j
        F[0][j], LF[0][j] = NEG, 0
    for i in range(1, la + 1):
        H[i][0] = F[i][0] = -(scheme.end_open + i * scheme.end_extend)
        LH[i][0] = LF[i][0] = i
        E[i][0], LE[i][0] = NEG, 0

    for i in range(1, la + 1):
        oh, eh = row_costs(i)
        for j in range(1, lb + 1):
            ov, ev = col_costs(j)

            e_ext = E[i][j - 1] - eh
            e_open = H[i][j - 1] - oh - eh
            if e_open > e_ext:
                E[i][j], LE[i][j] = e_open, LH[i][j - 1] + 1
            else:
                E[i][j], LE[i][j] = e_ext, LE[i][j - 1] + 1

            f_ext = F[i - 1][j] - ev
            f_open = H[i - 1][j] - ov - ev
            if f_open > f_ext:
                F[i][j], LF[i][j] = f_open, LH[i - 1][j] + 1
            else:
                F[i][j], LF[i][j] = f_ext, LF[i - 1][j] + 1

            d = H[i - 1][j - 1] + subst[ALPHABET.index(a[i - 1])][ALPHABET.index(b[j - 1])]
            ld = LH[i - 1][j - 1] + 1

            if d >= E[i][j] and d >= F[i][j]:
                H[i][j], LH[i][j] = d, ld
            elif E[i][j] >= F[i][j]:
                H[i][j], LH[i][j] = E[i][j], LE[i][j]
            else:
                H[i][j], LH[i][j] = F[i][j], LF[i][j]
    return H, LH, E, LE, F, LF


def align(a: str, b: str, scheme: AffineScheme) -> tuple[int, int]:
    """(score, length) of the global alignment of A=a against B=b."""
    H, LH, *_ = matrices(a, b, scheme)
    return H[len(a)][len(b)], LH[len(a)][len(b)]
