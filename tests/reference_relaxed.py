"""Plain references for backends/cpu/relaxed.py (docs/pruning.md, section 6)."""
from __future__ import annotations

from seqpairs.scoring.alphabet import encode_all

INF = float("inf")


def _gap_at(A, B, i, j, scheme):
    """The least an interior gap move into (i, j) can cost (its letter is B[j-1] for a
    horizontal move; SeqDist uses the same g for both moves into (i, j))."""
    b = B[j - 1]
    may = b == A[i - 1] or (j >= 2 and b == B[j - 2])
    return min(scheme.gap, scheme.homopolymer_gap) if may else scheme.gap


def step_costs(A, B, scheme, lam, t):
    """(diag(i, j), across(i, j), down(i, j)): cost' of the moves into (i, j) and g's
    share of an aligned pair (for diag: its reward), as functions."""
    la, lb = len(A), len(B)
    subst = scheme.matrix()
    codes, offsets = encode_all([A, B])
    ca, cb = codes[:la], codes[la:]

    def diag(i, j):
        a, b = ca[i - 1], cb[j - 1]
        return subst[a, b], (1 - t) if a == b else -t

    def across(i, j):  # (i, j-1) -> (i, j)
        if i == 0:
            return scheme.gap
        return 0.0 if i == la else _gap_at(A, B, i, j, scheme)

    def down(i, j):  # (i-1, j) -> (i, j)
        if j == 0:
            return scheme.gap
        return 0.0 if j == lb else _gap_at(A, B, i, j, scheme)

    return diag, across, down


def relaxed(A: str, B: str, scheme, lam: float, t: float) -> float:
    """L(lam) by the three-state recurrence, in real arithmetic."""
    la, lb = len(A), len(B)
    diag, across, down = step_costs(A, B, scheme, lam, t)
    P = [[[INF] * (lb + 1) for _ in range(la + 1)] for _ in range(3)]
    P[0][0][0] = 0.0
    for i in range(la + 1):
        for j in range(lb + 1):
            if i == j == 0:
                continue
            best = [INF, INF, INF]
            if j:
                g = across(i, j)
                best[0] = min(best[0], P[0][i][j - 1] + g)
                best[1] = min(best[1], P[1][i][j - 1] + g + lam * t)
                best[2] = min(best[2], min(P[1][i][j - 1], P[2][i][j - 1]) + g)
            if i:
                g = down(i, j)
                best[0] = min(best[0], P[0][i - 1][j] + g)
                best[1] = min(best[1], P[1][i - 1][j] + g + lam * t)
                best[2] = min(best[2], min(P[1][i - 1][j], P[2][i - 1][j]) + g)
            if i and j:
                s, reward = diag(i, j)
                best[1] = min(best[1], min(P[0][i - 1][j - 1], P[1][i - 1][j - 1]) + s
                              - lam * reward)
            for k in range(3):
                P[k][i][j] = best[k]
    return min(P[k][la][lb] for k in range(3))


def brute_force(A: str, B: str, scheme, lam: float, t: float) -> float:
    """L(lam) as the least over every path from (0, 0) to (la, lb) of cost'(P) - lam g(P),
    the paths enumerated (tiny sequences only)."""
    la, lb = len(A), len(B)
    diag, across, down = step_costs(A, B, scheme, lam, t)
    best = INF

    def walk(i, j, moves):
        nonlocal best
        if (i, j) == (la, lb):
            best = min(best, value(moves))
            return
        if i < la and j < lb:
            walk(i + 1, j + 1, moves + [("D", i + 1, j + 1)])
        if j < lb:
            walk(i, j + 1, moves + [("L", i, j + 1)])
        if i < la:
            walk(i + 1, j, moves + [("U", i + 1, j)])

    def value(moves):
        aligned = [k for k, (kind, _, _) in enumerate(moves) if kind == "D"]
        cost, g = 0.0, 0.0
        for k, (kind, i, j) in enumerate(moves):
            if kind == "D":
                s, reward = diag(i, j)
                cost, g = cost + s, g + reward
            else:
                cost += across(i, j) if kind == "L" else down(i, j)
                if aligned and aligned[0] < k < aligned[-1]:
                    g -= t  # a gap column between the first and the last aligned pair
        return cost - lam * g

    walk(0, 0, [])
    return best


