"""OptiClust (Westcott & Schloss 2017, mSphere 2:e00073-17), the engine of mothur's
`cluster(method=opti)`: OTUs that maximise the Matthews correlation coefficient (MCC) of
"same OTU" against "close pair" (distance <= cutoff) over all pairs of sequences.

Every sequence starts as a singleton. Each iteration visits the sequences that have a
close pair in one random order (drawn once from `seed`, as mothur shuffles once and
reuses the order) and moves each to whichever of its own OTU, a new singleton or an OTU
of one of its close neighbours gives the highest MCC, keeping the current OTU on ties
(only a strictly higher MCC moves it). tp/tn/fp/fn are updated incrementally from per-OTU
sizes and the neighbour counts of the visited sequence. Iterations stop once one changes
the MCC by no more than `delta` (mothur's test), when one moves nothing, or after
`max_iterations`. Sequences without a close pair stay singletons.

Differences from mothur (src/opticluster.cpp, 1.48):
- mothur drops the sequences without a close pair before clustering and, while it
  iterates, counts tn over pairs of the remaining sequences only; it adds the dropped ones
  back to tn only for the reported statistics (.sensspec). Here the MCC that is optimised
  is the reported one, over all n(n-1)/2 pairs. The two objectives differ by a constant
  added to tn, so the chosen moves can differ slightly.
- among candidate OTUs with the same MCC mothur keeps the first in its bin order; here the
  first in the visited sequence's neighbour order. Random streams differ (mothur's
  std::shuffle vs numpy), so partitions are not bit-identical, only equally good.
- when every pair is close the MCC is 0 for every partition (no far pairs); mothur then
  switches to the tp+tn metric, which puts everything in one OTU. Here that case returns
  one OTU directly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass(frozen=True)
class Confusion:
    """Pair counts of a partition against the close pairs, over all n(n-1)/2 pairs."""

    tp: int  # close, same OTU
    tn: int  # far, different OTUs
    fp: int  # far, same OTU
    fn: int  # close, different OTUs

    @property
    def mcc(self) -> float:
        """Matthews correlation coefficient; 0.0 when a margin is 0 (as mothur)."""
        tp, tn, fp, fn = self.tp, self.tn, self.fp, self.fn
        den = (tp + fn) * (fp + tn) * (tp + fp) * (tn + fn)
        if den == 0:
            return 0.0
        return (tp * tn - fp * fn) / math.sqrt(den)


def _pairs(n: int, i, j) -> tuple[np.ndarray, np.ndarray]:
    i = np.asarray(i)
    j = np.asarray(j)
    if i.ndim != 1 or i.shape != j.shape:
        raise ValueError("i and j must be 1-D arrays of the same length")
    if len(i) and not (np.issubdtype(i.dtype, np.integer) and np.issubdtype(j.dtype, np.integer)):
        raise ValueError("i and j must hold integer sequence indices")
    i = i.astype(np.int64, copy=False)
    j = j.astype(np.int64, copy=False)
    if len(i):
        if min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= n:
            raise ValueError(f"pair index out of range 0..{n - 1}")
        if np.any(i == j):
            raise ValueError("a pair joins a sequence to itself (i == j)")
    return i, j


def confusion(labels, n: int, i, j) -> Confusion:
    """tp/tn/fp/fn of any partition (`labels`, one per sequence, any integers) against the
    close pairs (i[k], j[k]), each unordered pair once."""
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must have length n = {n}")
    i, j = _pairs(n, i, j)
    _, dense = np.unique(labels, return_inverse=True)
    dense = dense.reshape(-1)
    tp = int(np.count_nonzero(dense[i] == dense[j]))
    fn = len(i) - tp
    sizes = np.bincount(dense).astype(np.int64)
    fp = int((sizes * (sizes - 1) // 2).sum()) - tp
    tn = n * (n - 1) // 2 - tp - fn - fp
    return Confusion(tp=tp, tn=tn, fp=fp, fn=fn)


@njit(nogil=True, cache=True)
def _csr(n, i, j):
    """Symmetric adjacency of the pairs: neighbours of s are indices[indptr[s]:indptr[s+1]]."""
    indptr = np.zeros(n + 1, np.int64)
    for k in range(i.shape[0]):
        indptr[i[k] + 1] += 1
        indptr[j[k] + 1] += 1
    for s in range(n):
        indptr[s + 1] += indptr[s]
    fill = indptr[:-1].copy()
    indices = np.empty(indptr[n], np.int64)
    for k in range(i.shape[0]):
        a = i[k]
        b = j[k]
        indices[fill[a]] = b
        fill[a] += 1
        indices[fill[b]] = a
        fill[b] += 1
    return indptr, indices


@njit(inline="always")
def _mcc(tp, tn, fp, fn):
    p = tp + fn
    q = fp + tn
    pp = tp + fp
    qq = tn + fn
    if p == 0.0 or q == 0.0 or pp == 0.0 or qq == 0.0:
        return 0.0
    return (tp * tn - fp * fn) / math.sqrt(p * q * pp * qq)


@njit(nogil=True, cache=True)
def _sweep(indptr, indices, order, labels, sizes, free, counts, scratch, touched):
    """One OptiClust iteration over the sequences in `order`, in place.

    labels: OTU of each sequence; sizes: members per OTU; free[0] holds the number of
    empty OTU ids, stacked in free[1:]; counts: [tp, tn, fp, fn]; scratch: zeros, one per
    OTU id; touched: room for the largest degree. Returns the number of moves."""
    tp = counts[0]
    tn = counts[1]
    fp = counts[2]
    fn = counts[3]
    moves = 0
    for k in range(order.shape[0]):
        s = order[k]
        a = labels[s]
        nt = 0
        for e in range(indptr[s], indptr[s + 1]):
            b = labels[indices[e]]
            if scratch[b] == 0:
                touched[nt] = b
                nt += 1
            scratch[b] += 1
        # counts with s taken out of a (closes to a become fn, fars to a become tn)
        c_a = scratch[a]
        f_a = sizes[a] - 1 - c_a
        tp0 = tp - c_a
        fn0 = fn + c_a
        fp0 = fp - f_a
        tn0 = tn + f_a
        best = _mcc(float(tp), float(tn), float(fp), float(fn))
        best_b = a
        if sizes[a] > 1:
            m = _mcc(float(tp0), float(tn0), float(fp0), float(fn0))
            if m > best:
                best = m
                best_b = -1
        for t in range(nt):
            b = touched[t]
            if b != a:
                c = scratch[b]
                f = sizes[b] - c
                m = _mcc(float(tp0 + c), float(tn0 - f), float(fp0 + f), float(fn0 - c))
                if m > best:
                    best = m
                    best_b = b
        if best_b != a:
            if best_b == -1:
                best_b = free[free[0]]
                free[0] -= 1
                c = 0
                f = 0
            else:
                c = scratch[best_b]
                f = sizes[best_b] - c
            tp = tp0 + c
            fn = fn0 - c
            fp = fp0 + f
            tn = tn0 - f
            sizes[a] -= 1
            if sizes[a] == 0:
                free[0] += 1
                free[free[0]] = a
            sizes[best_b] += 1
            labels[s] = best_b
            moves += 1
        for t in range(nt):
            scratch[touched[t]] = 0
    counts[0] = tp
    counts[1] = tn
    counts[2] = fp
    counts[3] = fn
    return moves


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    """Relabel 0.. in order of first appearance by sequence index."""
    if len(labels) == 0:
        return labels.astype(np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def opticlust(n: int, i: np.ndarray, j: np.ndarray, *, max_iterations: int = 100,
              delta: float = 1e-4, seed: int = 0) -> tuple[np.ndarray, Confusion]:
    """OptiClust of sequences 0..n-1 whose close pairs (distance <= cutoff) are
    (i[k], j[k]), each unordered pair once (see the module docstring). Returns each
    sequence's OTU, numbered 0.. in order of first appearance, and the partition's
    confusion counts over all n(n-1)/2 pairs."""
    n = int(n)
    if n < 0:
        raise ValueError("n must be >= 0")
    i, j = _pairs(n, i, j)
    total = n * (n - 1) // 2
    if n > 1 and len(i) == total:  # no far pair: mothur's tp+tn fallback, one OTU
        return np.zeros(n, np.int64), Confusion(tp=total, tn=0, fp=0, fn=0)
    indptr, indices = _csr(n, i, j)
    degree = np.diff(indptr)
    labels = np.arange(n, dtype=np.int64)
    sizes = np.ones(n, np.int64)
    free = np.zeros(n + 1, np.int64)  # no empty OTU id yet
    counts = np.array([0, total - len(i), 0, len(i)], np.int64)  # all singletons
    scratch = np.zeros(n, np.int64)
    touched = np.empty(int(degree.max()) if n else 0, np.int64)
    rng = np.random.default_rng(seed)
    order = rng.permutation(np.flatnonzero(degree > 0)).astype(np.int64)
    metric = Confusion(*(int(x) for x in counts)).mcc
    for _ in range(max_iterations):
        moves = _sweep(indptr, indices, order, labels, sizes, free, counts, scratch, touched)
        new = Confusion(*(int(x) for x in counts)).mcc
        change = abs(new - metric)
        metric = new
        if moves == 0 or change <= delta:
            break
    tp, tn, fp, fn = (int(x) for x in counts)
    return _first_appearance(labels), Confusion(tp=tp, tn=tn, fp=fp, fn=fn)
