"""Pure-Python reference of the affine global alignment, full matrices, from AffineScheme's spec.

Slow and plain on purpose: it defines the semantics that the Numba and CUDA kernels must
reproduce bit for bit. Letters are plain strings over ACGT; Python ints never overflow, so
the kernels' int32 arithmetic must agree with it exactly.
"""
from __future__ import annotations

from seqpairs.scoring import AffineScheme
from seqpairs.scoring.affine import NEG


def best(*states):
    """The best (score, length): the highest score, then the shortest length."""
    return max(states, key=lambda state: (state[0], -state[1]))


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

            # values compared as (score, -length): the best score, then the shorter
            E[i][j], LE[i][j] = best((H[i][j - 1] - oh - eh, LH[i][j - 1] + 1),
                                     (E[i][j - 1] - eh, LE[i][j - 1] + 1))
            F[i][j], LF[i][j] = best((H[i - 1][j] - ov - ev, LH[i - 1][j] + 1),
                                     (F[i - 1][j] - ev, LF[i - 1][j] + 1))
            d = H[i - 1][j - 1] + subst[scheme.alphabet.index(a[i - 1])][scheme.alphabet.index(b[j - 1])]
            H[i][j], LH[i][j] = best((d, LH[i - 1][j - 1] + 1), (E[i][j], LE[i][j]),
                                     (F[i][j], LF[i][j]))
    return H, LH, E, LE, F, LF


def align(a: str, b: str, scheme: AffineScheme) -> tuple[int, int]:
    """(score, length) of the global alignment of A=a against B=b."""
    H, LH, *_ = matrices(a, b, scheme)
    return H[len(a)][len(b)], LH[len(a)][len(b)]


def screen(a: str, b: str, scheme: AffineScheme, alpha: int, beta: int) -> tuple[int, int]:
    """(score, weight): the optimal score of A=a against B=b and the largest alpha x matches
    - beta x mismatches among the alignments with that score (gaps weigh nothing), by the
    spec's recurrence on (score, weight) pairs compared as tuples."""
    la, lb = len(a), len(b)
    worst = (NEG, 0)

    def ends(k):
        return (-(scheme.end_open + k * scheme.end_extend), 0)

    def gap(state, open_, extend):
        return (state[0] - open_ - extend, state[1])

    H = [[ends(j) if j else (0, 0) for j in range(lb + 1)]]
    E, F = [[worst] * (lb + 1)], [[worst] * (lb + 1)]
    for i in range(1, la + 1):
        H.append([ends(i)] + [None] * lb)
        E.append([worst] * (lb + 1))
        F.append([ends(i)] + [None] * lb)
        oh, eh = ((scheme.end_open, scheme.end_extend) if i == la
                  else (scheme.gap_open, scheme.gap_extend))
        for j in range(1, lb + 1):
            ov, ev = ((scheme.end_open, scheme.end_extend) if j == lb
                      else (scheme.gap_open, scheme.gap_extend))
            E[i][j] = max(gap(H[i][j - 1], oh, eh), gap(E[i][j - 1], 0, eh))
            F[i][j] = max(gap(H[i - 1][j], ov, ev), gap(F[i - 1][j], 0, ev))
            x, y = a[i - 1], b[j - 1]
            step = (scheme.subst[scheme.alphabet.index(x)][scheme.alphabet.index(y)],
                    alpha if x == y else -beta)
            d = H[i - 1][j - 1]
            H[i][j] = max((d[0] + step[0], d[1] + step[1]), E[i][j], F[i][j])
    return H[la][lb]


def screener(seqs: list[str], calls: list | None = None):
    """A backend's affine_screen factory computing `screen` for the pairs of `seqs` (a
    CPU-made stand-in for the GPU's); each call's pairs are appended to `calls`."""
    import numpy as np

    def factory(codes, offsets, scheme, threads=None):
        def screen(pa, pb, alpha, beta):
            if calls is not None:
                calls.extend(zip(pa.tolist(), pb.tolist()))
            found = [globals()["screen"](seqs[x], seqs[y], scheme, alpha, beta)
                     for x, y in zip(pa, pb)]
            return tuple(np.array([f[k] for f in found], dtype=np.int32) for k in (0, 1))

        return screen

    return factory


# --- traceback with vsearch's tie rules (seqpairs.backends.cpu.trace_affine) ---
#
# Written from vsearch's align_simd.cc (search16's ALIGNCORE and backtrack16), on the
# AffineScheme's costs. The score is the spec's; only the choice among equal-scoring
# paths differs from the shortest-length rule above:
#   H: D unless F > D; then E if E > max(D, F): ties prefer D, then F (up), then E (left);
#   E, F: extend only when that scores strictly more than opening from H (ties open).
# The path is walked back from (la, lb); once it reaches row 0 or column 0 it follows that
# border (vsearch's backtrack does the same).


def vsearch_traceback(a: str, b: str, scheme: AffineScheme):
    """(score, columns) of the alignment vsearch's backtrack takes; a column is a pair of
    letters with "-" for a gap, A's letter first, in alignment order."""
    la, lb = len(a), len(b)
    subst = scheme.subst

    def grid(value):
        return [[value] * (lb + 1) for _ in range(la + 1)]

    H, E, F = grid(NEG), grid(NEG), grid(NEG)
    choice, e_extends, f_extends = grid(None), grid(False), grid(False)
    H[0][0] = 0
    for j in range(1, lb + 1):
        H[0][j] = -(scheme.end_open + j * scheme.end_extend)
    for i in range(1, la + 1):
        H[i][0] = -(scheme.end_open + i * scheme.end_extend)

    for i in range(1, la + 1):
        oh, eh = ((scheme.end_open, scheme.end_extend) if i == la
                  else (scheme.gap_open, scheme.gap_extend))
        for j in range(1, lb + 1):
            ov, ev = ((scheme.end_open, scheme.end_extend) if j == lb
                      else (scheme.gap_open, scheme.gap_extend))
            e_open, e_ext = H[i][j - 1] - oh - eh, E[i][j - 1] - eh
            E[i][j], e_extends[i][j] = (e_ext, True) if e_ext > e_open else (e_open, False)
            f_open, f_ext = H[i - 1][j] - ov - ev, F[i - 1][j] - ev
            F[i][j], f_extends[i][j] = (f_ext, True) if f_ext > f_open else (f_open, False)
            d = H[i - 1][j - 1] + subst[scheme.alphabet.index(a[i - 1])][scheme.alphabet.index(b[j - 1])]
            H[i][j], choice[i][j] = d, "M"
            if F[i][j] > H[i][j]:
                H[i][j], choice[i][j] = F[i][j], "D"
            if E[i][j] > H[i][j]:
                H[i][j], choice[i][j] = E[i][j], "I"

    cols = []
    i, j, state = la, lb, "H"
    while i > 0 and j > 0:
        if state == "H":
            state = choice[i][j]
        if state == "M":
            cols.append((a[i - 1], b[j - 1]))
            i, j, state = i - 1, j - 1, "H"
        elif state == "I":  # B[j-1] against a gap in A
            cols.append(("-", b[j - 1]))
            state = "I" if e_extends[i][j] else "H"
            j -= 1
        else:  # "D": A[i-1] against a gap in B
            cols.append((a[i - 1], "-"))
            state = "D" if f_extends[i][j] else "H"
            i -= 1
    cols += [(a[k - 1], "-") for k in range(i, 0, -1)]
    cols += [("-", b[k - 1]) for k in range(j, 0, -1)]
    return H[la][lb], cols[::-1]


def column_score(cols, scheme: AffineScheme) -> int:
    """Score of an alignment given as columns, from the scheme's costs alone (a gap run is
    terminal when it touches an end of the alignment in the sequence it runs along)."""
    la = sum(x != "-" for x, _ in cols)
    lb = sum(y != "-" for _, y in cols)
    ops = ["I" if x == "-" else "D" if y == "-" else "M" for x, y in cols]
    score, i, j, k = 0, 0, 0, 0
    while k < len(cols):
        x, y = cols[k]
        if ops[k] == "M":
            score += scheme.subst[scheme.alphabet.index(x)][scheme.alphabet.index(y)]
            i, j, k = i + 1, j + 1, k + 1
            continue
        run = k
        while run < len(cols) and ops[run] == ops[k]:
            run += 1
        n = run - k
        if ops[k] == "I":  # horizontal: along row i of A
            end = i in (0, la)
            j += n
        else:  # vertical: along column j of B
            end = j in (0, lb)
            i += n
        score -= (scheme.end_open + n * scheme.end_extend if end
                  else scheme.gap_open + n * scheme.gap_extend)
        k = run
    return score
