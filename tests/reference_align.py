"""Pure-Python reference of `seqpairs align` from AlignMode's spec (scoring/local.py): full
matrices, Python integers, minus infinity as None.

The start is found without a reverse pass: among the windows that end at the end found,
the one whose global alignment reaches the score, with the shortest target span, then the
shortest query span (a window's global alignment reaching the score starts with a letter
pair, or dropping its leading gap would beat the best score). Slow on purpose: for short
sequences only.
"""
from __future__ import annotations

from seqpairs.scoring import LocalScheme
from seqpairs.scoring.local import AlignMode


def _codes(seq, scheme):
    return [scheme.alphabet.index(c) for c in seq] if isinstance(seq, str) else list(seq)


def _gap(opened, previous, extend):
    return opened if previous is None else max(opened, previous - extend)


def matrices(q, t, scheme: LocalScheme, floor: bool, free_rows: bool):
    """H of q (columns) against t (rows) with LocalScheme's recurrence; `floor`: local's 0;
    `free_rows`: H(i, 0) = 0 (the target's leading letters free)."""
    m, n = len(q), len(t)
    opening, extend = scheme.gap_open + scheme.gap_extend, scheme.gap_extend

    def gap(k):
        return -(opening + (k - 1) * extend) if k else 0

    H = [[None] * (m + 1) for _ in range(n + 1)]
    E = [[None] * (m + 1) for _ in range(n + 1)]
    F = [[None] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        H[0][j] = 0 if floor else gap(j)
    for i in range(1, n + 1):
        H[i][0] = 0 if floor or free_rows else gap(i)
        for j in range(1, m + 1):
            E[i][j] = _gap(H[i][j - 1] - opening, E[i][j - 1], extend)
            F[i][j] = _gap(H[i - 1][j] - opening, F[i - 1][j], extend)
            H[i][j] = max(H[i - 1][j - 1] + scheme.subst[q[j - 1]][t[i - 1]], E[i][j], F[i][j])
            if floor:
                H[i][j] = max(0, H[i][j])
    return H


def global_score(q, t, scheme: LocalScheme) -> int:
    return matrices(q, t, scheme, False, False)[len(t)][len(q)]


def align(query, target, scheme: LocalScheme, mode: AlignMode):
    """(score, qstart, qend, tstart, tend), 1-based inclusive; local score 0: zeros."""
    q, t = _codes(query, scheme), _codes(target, scheme)
    m, n = len(q), len(t)
    H = matrices(q, t, scheme, mode.local, mode.free_target_ends)
    if mode.local:
        cells = [(H[i][j], i, j) for i in range(1, n + 1) for j in range(1, m + 1)]
    elif mode.free_target_ends:
        cells = [(H[i][m], i, m) for i in range(1, n + 1)]
    else:
        return H[n][m], 1, m, 1, n
    score = max(cell[0] for cell in cells)
    if mode.local and score == 0:
        return 0, 0, 0, 0, 0
    tend, qend = min((i, j) for s, i, j in cells if s == score)  # smallest target end first
    first_query = [1] if mode.free_target_ends else range(qend, 0, -1)
    for tstart in range(tend, 0, -1):  # shortest target span first
        for qstart in first_query:  # then shortest query span
            if global_score(q[qstart - 1:qend], t[tstart - 1:tend], scheme) == score:
                return score, qstart, qend, tstart, tend
    assert mode.free_target_ends and score == matrices(q, [], scheme, False, False)[0][m]
    return score, 1, m, 0, 0  # the query against gaps only: no target letter


def rescore(query, target, start, runs, scheme: LocalScheme) -> int:
    """Score of the alignment given as (op, length) runs over "=XID" from (qstart, tstart)."""
    q, t = _codes(query, scheme), _codes(target, scheme)
    i, j = start[0] - 1, start[1] - 1
    opening, extend = scheme.gap_open + scheme.gap_extend, scheme.gap_extend
    total = 0
    for op, length in runs:
        if op in "=X":
            for _ in range(length):
                assert (q[i] == t[j]) == (op == "="), (op, i, j)
                total += scheme.subst[q[i]][t[j]]
                i, j = i + 1, j + 1
        else:
            total -= opening + (length - 1) * extend
            i, j = (i + length, j) if op == "I" else (i, j + length)
    return total, i, j
