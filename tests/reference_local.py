"""Pure-Python reference of the local alignment score, full matrices, from LocalScheme's spec.

Slow and plain on purpose: Python integers, minus infinity as None, no clamping, no
profile; the Numba and CUDA engines must give exactly these scores.
"""
from __future__ import annotations

from seqpairs.scoring import LocalScheme


def score(query, target, scheme: LocalScheme, profile=None) -> int:
    """Best local score of query (columns) against target (rows): strings or code lists;
    profile[j][b] (a PSSM), if given, scores query position j against target letter b."""
    q = [scheme.alphabet.index(c) for c in query] if isinstance(query, str) else list(query)
    t = [scheme.alphabet.index(c) for c in target] if isinstance(target, str) else list(target)
    m, n = len(q), len(t)
    opening = scheme.gap_open + scheme.gap_extend
    H = [[0] * (m + 1) for _ in range(n + 1)]
    E = [[None] * (m + 1) for _ in range(n + 1)]
    F = [[None] * (m + 1) for _ in range(n + 1)]
    best = 0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            E[i][j] = _gap(H[i][j - 1] - opening, E[i][j - 1], scheme.gap_extend)
            F[i][j] = _gap(H[i - 1][j] - opening, F[i - 1][j], scheme.gap_extend)
            pair = (scheme.subst[q[j - 1]][t[i - 1]] if profile is None
                    else int(profile[j - 1][t[i - 1]]))
            diagonal = H[i - 1][j - 1] + pair
            H[i][j] = max(0, diagonal, E[i][j], F[i][j])
            best = max(best, H[i][j])
    return best


def _gap(opened: int, previous, extend: int) -> int:
    """A gap opened here, or the previous one (None: minus infinity) extended, whichever is more."""
    return opened if previous is None else max(opened, previous - extend)


def one_target_each(queries, targets, keys=None):
    """local_scores' (queries, targets, pairs, keys) for pair k = (queries[k], targets[k]),
    target k with key keys[k] (default k)."""
    ks = range(len(queries))
    return (queries, targets, [(k, k) for k in ks] or [], list(ks) if keys is None else keys)
