"""Exact pruning of the distance stage's sparse outputs (docs/pruning.md has the proofs).

The edge list keeps a pair when its SeqDist distance is at most max_distance or its
identity bound (iddef) reaches candidate_identity. Most pairs of a dataset do neither, and
neither test needs every pair's alignment:

1. a counting filter: q-gram counts (backend.qgram_shared) below the least that a kept
   pair can have (its edits are bounded by the thresholds; under an identity test, with
   an upper bound on its cost from backend.seqdist_upper, band after band:
   backend.upper_cost) drop a pair for certain; under an identity test, the relaxed
   recurrence (backend.seqdist_relaxed) above that upper bound too;
2. banded alignments with a certificate (backend.seqdist_band), band after band
   (backend.band_cost: the widths, narrowest first, and what a band cell costs): a
   certified pair has the full matrix's cost and counts bit for bit; an uncertified one
   still gives bounds on its cost, which drop it when they prove it fails both tests
   (with the relaxed recurrence above the band's upper bound for the identity test);
3. what is left is aligned in full (backend.seqdist; or by the caller, Pruner.settle,
   which may screen first).

The pairs that reach the caller carry exactly the full kernel's values and include every
pair the thresholds keep, so the edge list is the same bytes as without pruning.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..backends.common import path_diagonals

Q = 8  # q-gram length of the counting filter
# Slack on the thresholds: the tests compare floating-point quotients, whose rounding
# could pass a pair whose real quotient is a hair beyond the threshold.
SLACK = 2.0**-40
IDDEF_WITH_BOUND = 2  # the identity definition whose test the counting filter can bound
# Below the windowed filter's floor by more than its sums' rounding (values < 2^11)
WINDOW_TOLERANCE = 1e-6
# Each batch's upper bounds and bands are tried on every SAMPLE-th pair, and run on the
# others only where they paid there (batches of at least SAMPLE * MIN_SAMPLE pairs;
# smaller ones run everything).
SAMPLE, MIN_SAMPLE = 64, 16
# lam of the relaxed recurrence (docs/pruning.md, section 6): on C005's and the MiSeq reads'
# pairs 10 proves 95-98% of the pairs the thresholds do not keep, 30 a point more
RELAXED_LAM = 10.0


def run_cells(seqs) -> float:
    """About the cells of all pairs of seqs: (sum of lengths)^2 / 2."""
    return float(np.sum(seqs.lengths, dtype=np.float64)) ** 2 / 2


def worth_pruning(backend, seqs) -> bool:
    """Whether the run is large enough to repay the pruning kernels' first compilation
    (backend.prune_least_cells). The outputs are the same either way."""
    return run_cells(seqs) >= backend.prune_least_cells


def qgram_bits(n: int, memory: int, q: int = Q) -> int:
    """Bits per sequence's q-gram bitset within `memory` bytes for n sequences: all 4^q
    q-grams when memory allows, else fewer (folded by a hash: collisions add to the
    counts, which weakens the filter), at least 2^10."""
    fits = int(math.log2(max(memory * 8 // max(n, 1), 1)))
    return max(10, min(2 * q, fits))


def distance_edits(shortest, max_distance: float, cheapest_edit: float):
    """The most mismatches plus counted gap columns (E') a path of a pair with `shortest`
    as the shorter length can have at distance <= max_distance: cheapest_edit * E' <=
    cost <= max_distance * (matches + E'), matches <= shortest. None: no bound."""
    d = max_distance * (1 + SLACK)
    if not d < cheapest_edit:
        return None
    return np.floor(shortest * (d / (cheapest_edit - d)) * (1 + SLACK))


def distance_qgrams(shortest, max_distance: float, cheapest_edit: float, q: int = Q):
    """The fewest shared q-grams (qgram_shared) of a pair within max_distance: -inf where
    there is no bound."""
    if max_distance == -math.inf:
        return math.inf  # no pair passes
    edits = distance_edits(shortest, max_distance, cheapest_edit)
    if edits is None:
        return -math.inf
    return shortest - (q + 1) * edits - q + 1


def least_columns(shortest, upper, cheapest_gap: float):
    """K_min (docs/pruning.md, section 4): the fewest columns from the first to the last
    aligned pair of a path costing at most `upper`, shortest - upper / cheapest_gap (the
    letters of the shorter sequence outside them are in gap columns that are paid for),
    at least 1."""
    return np.maximum(1.0, shortest - upper / cheapest_gap * (1 + SLACK))


def identity_qgrams(shortest, upper, identity: float, cheapest_gap: float, q: int = Q):
    """The fewest shared q-grams of a pair whose path has iddef 2 identity >= identity,
    given `upper`, an upper bound on its cost: its K columns (at least least_columns) hold
    at most (1 - identity) K edits. -inf where there is no bound."""
    slack = (1 - identity * (1 - SLACK))
    per_column = 1 - (q + 1) * slack
    if not (per_column > 0 and cheapest_gap > 0):
        return -math.inf
    return least_columns(shortest, upper, cheapest_gap) * per_column - q + 1


def identity_window(shortest, upper, identity: float, cheapest_gap: float, q: int = Q):
    """The windowed counting filter of a pair whose path has iddef 2 identity >= identity,
    given `upper` (docs/pruning.md, section 4): each of its sequences has a run of at least
    `least` consecutive q-gram positions whose hits (qgram_shared's densest) reach `floor`
    beyond `density` a position. Returns (least: int64 per pair, density, floor), or
    None where there is no bound; a pair with least < 1 has none."""
    t = identity * (1 - SLACK)
    density = (1 - q * (1 - t) / t) * (1 - SLACK)  # rounded down: the test only weakens
    if not (density > 0 and cheapest_gap > 0):
        return None
    # the least letters of each sequence's stretch
    letters = np.floor(t * least_columns(shortest, upper, cheapest_gap) * (1 - SLACK))
    return (letters - q + 1).astype(np.int64), density, -(1 - density) * (q - 1)


class Pruner:
    """The exact values of the pairs that the thresholds may keep, computed with as little
    alignment as the bounds allow. Call it with pair indices (the backend's arrays):
    returns (positions of the pairs it kept, in order; cost, length, matches, aligned,
    leading of those pairs), the same values as the backend's full seqdist kernel."""

    def __init__(self, backend, seqs, scheme, threads, max_distance, candidate_identity,
                 iddef):
        xp = backend.xp
        self.xp = xp
        self.lengths = xp.asarray(seqs.lengths)
        # the full kernel for __call__ only (the distance stage aligns what settle leaves
        # itself): made on first use, not beside the caller's own
        self._full = functools.partial(backend.seqdist, seqs.codes, seqs.offsets, scheme,
                                       threads)
        self.band = backend.seqdist_band(seqs.codes, seqs.offsets, scheme, threads)
        self.upper = backend.seqdist_upper(seqs.codes, seqs.offsets, scheme, threads)
        self.relaxed = (None if backend.seqdist_relaxed is None
                        else backend.seqdist_relaxed(seqs.codes, seqs.offsets, scheme, threads))
        self.relaxed_cost = backend.relaxed_cost
        self.shared = backend.qgram_shared(seqs.codes, seqs.offsets, Q,
                                           qgram_bits(seqs.n, backend.qgram_memory), threads)
        self.max_distance = max_distance
        self.identity = candidate_identity
        self.bound_identity = candidate_identity is not None and iddef == IDDEF_WITH_BOUND
        self.cheapest_gap = scheme.cheapest_gap
        self.cheapest_edit = scheme.cheapest_edit
        self.band_cost = backend.band_cost
        self.band_lower = backend.band_lower
        self.band_shared = backend.band_shared
        self.upper_cost = backend.upper_cost
        self.stats = {"pairs": 0, "qgrams": 0, "full": 0}
        self.stats.update({f"upper {w}": 0 for w in self.upper_cost})
        if self.relaxed is not None:
            self.stats["relaxed"] = self.stats["relaxed after bands"] = 0
        self.stats.update({f"band {w}": 0 for w in self.band_cost})
        self.stats.update({f"certified {w}": 0 for w in self.band_cost})

    def summary(self) -> str:
        """Where the pairs were decided, for the log."""
        return ", ".join(f"{name} {count}" for name, count in self.stats.items())

    def _distance_fails(self, shared, shortest, total, lower):
        """Pairs proved beyond max_distance: too few q-grams, or a cost above
        max_distance * (la + lb) (the length never exceeds la + lb)."""
        fails = shared < distance_qgrams(shortest, self.max_distance, self.cheapest_edit)
        if lower is not None:
            fails |= lower > self.max_distance * (1 + SLACK) * total
        return fails

    def _identity_fails(self, i, j, shared, shortest, upper, tested=None):
        """Pairs (i, j: their sequences) proved below candidate_identity (none when it has
        no bound): by their counts, then the others by their densest windows, except where
        an upper bound `tested` that did not prove them asked for runs as long (a run of
        the same least length or shorter proves nothing more)."""
        xp = self.xp
        if self.identity is None:
            return xp.ones(len(shared), dtype=bool)
        if not self.bound_identity:
            return xp.zeros(len(shared), dtype=bool)
        fails = shared < identity_qgrams(shortest, upper, self.identity, self.cheapest_gap)
        window = identity_window(shortest, upper, self.identity, self.cheapest_gap)
        if window is not None:
            least, density, floor = window
            new = ~fails & (least >= 1)
            if tested is not None:
                new &= least > identity_window(shortest, tested, self.identity,
                                               self.cheapest_gap)[0]
            left = xp.flatnonzero(new)
            if len(left):
                densest = self.shared.densest(i[left], j[left], least[left], density)
                fails[left] = densest < floor - WINDOW_TOLERANCE
        return fails

    def _band(self, i, j, pending, width, shared, shortest, total, found):
        """One band over the pending pairs: the certified ones join `found`; returns the
        pairs neither certified nor proved to fail."""
        self.stats[f"band {width}"] += len(pending)
        exact, cost, *counts, upper = self.band(i[pending], j[pending], width,
                                                self.band_lower.get(width, 0))
        found.append((pending[exact], cost[exact], *(c[exact] for c in counts)))
        self.stats[f"certified {width}"] += int(exact.sum())
        rest = ~exact
        pending, cost, upper = pending[rest], cost[rest], upper[rest]
        fails = self._distance_fails(shared[pending], shortest[pending], total[pending], cost)
        both = self.xp.flatnonzero(fails)  # the identity test only where the distance fails
        pairs = pending[both]
        fails[both] = self._identity_fails(i[pairs], j[pairs], shared[pairs], shortest[pairs],
                                           upper[both])
        if self.relaxed is not None and self.bound_identity:
            # the rest would go to a wider band or the full kernel, either dearer a pair
            # than the relaxed recurrence (relaxed_cost), which proves most of them: 2^11
            # community reads, 27,285 of the 36,004 not kept that reached the full kernel
            left = both[~fails[both]]
            fails[left] = self._relaxed_fails(i, j, pending[left], upper[left],
                                              "relaxed after bands")
        return pending[~fails]

    def _relaxed_fails(self, i, j, pairs, upper, stat="relaxed"):
        """Whether the relaxed recurrence proves each of `pairs` below candidate_identity,
        given an upper bound on its cost (docs/pruning.md, section 6); counted in `stat`."""
        self.stats[stat] += len(pairs)
        if len(pairs) == 0:
            return self.xp.zeros(0, dtype=bool)
        bound = self.relaxed(i[pairs], j[pairs], RELAXED_LAM, self.identity * (1 - SLACK),
                             upper)
        return bound > upper * (1 + SLACK)

    def _upper_fails(self, i, j, suspects, widths, relax, shared, shortest, fails):
        """Marks in `fails` the suspects (pairs that fail the distance test) whose upper
        bound proves they fail the identity test, the bands `widths` in turn, each on the
        suspects the narrower ones left (most unrelated pairs need only a narrow band);
        with `relax`, the suspects left then go through the relaxed recurrence against
        their least upper bound (docs/pruning.md, section 6). Returns, per band, whether it
        paid (the cells it spared outweigh its cells times its upper_cost) and whether the
        relaxed recurrence did, the bands' cells counted with it (it needs an upper bound:
        when it pays and no band paid alone, the narrowest is kept for it; a wider one
        seldom tightens that bound enough to pay: on C005, 31 more pairs of 166,632)."""
        xp = self.xp
        paid, cost, spared = {}, 0.0, 0.0
        least = xp.full(len(suspects), xp.inf)  # each suspect's least upper bound
        left = xp.arange(len(suspects))  # the suspects not proved yet
        for width in widths:
            if len(left) == 0:
                break
            pairs = suspects[left]
            self.stats[f"upper {width}"] += len(pairs)
            upper = self.upper(i[pairs], j[pairs], width)
            tested = least[left]
            least[left] = xp.minimum(tested, upper)
            proved = self._identity_fails(i[pairs], j[pairs], shared[pairs], shortest[pairs],
                                          upper, tested)
            fails[pairs[proved]] = True
            la, lb = self.lengths[i[pairs]], self.lengths[j[pairs]]
            its_spared = float((la * lb)[proved].sum())
            its_cost = self.upper_cost[width] * float(((2 * width + 1) * la + la + lb).sum())
            paid[width] = its_spared > its_cost
            cost, spared = cost + its_cost, spared + its_spared
            left = left[~proved]
        if not (relax and self.relaxed is not None and len(left)):
            return paid, False
        pairs = suspects[left]
        upper = least[left]
        proved = self._relaxed_fails(i, j, pairs, upper)
        fails[pairs[proved]] = True
        la, lb = self.lengths[i[pairs]], self.lengths[j[pairs]]
        band = 2 * path_diagonals(upper, self.cheapest_gap) + 1  # its cells a row at most
        relax_paid = (spared + float((la * lb)[proved].sum())
                      > cost + self.relaxed_cost * float((la * xp.minimum(lb, band)).sum()))
        if relax_paid and not any(paid.values()):
            paid[widths[0]] = True
        return paid, relax_paid

    def _bands(self, i, j, pending, widths, shared, shortest, total, found):
        """The pending pairs through the bands `widths` in turn; returns those left and, per
        band, whether it paid: the cells it spared the rest are more than its own cells
        cost (band_cost)."""
        paid = {}
        for width in widths:
            if len(pending) == 0:
                break
            la, lb = self.lengths[i[pending]], self.lengths[j[pending]]
            before = float((la * lb).sum())
            band_cells = float(((2 * width + 1) * la + la + lb).sum())
            left = self._band(i, j, pending, width, shared, shortest, total, found)
            spared = before - float((self.lengths[i[left]] * self.lengths[j[left]]).sum())
            paid[width] = spared > self.band_cost[width] * band_cells
            pending = left
        return pending, paid

    def settle(self, i, j):
        """The pairs that the bounds settle: returns (positions of the pairs whose exact
        values the bands gave; cost, length, matches, aligned, leading of those pairs) in
        no particular order, and the positions of the pairs left to align in full (which
        include every other pair the thresholds may keep)."""
        xp = self.xp
        n = len(i)
        la, lb = self.lengths[i], self.lengths[j]
        shortest, total = xp.minimum(la, lb).astype(np.float64), (la + lb).astype(np.float64)
        shared = self.shared(i, j)
        pending = xp.arange(n)
        distance_fails = self._distance_fails(shared, shortest, total, None)
        if self.identity is None:  # the counting filter alone decides the distance test
            pending = pending[~distance_fails]
        elif self.bound_identity:  # and with an upper bound on the cost, the identity test
            fails = xp.zeros(n, dtype=bool)
            suspects = pending[distance_fails]
            widths, relax = list(self.upper_cost), True
            if len(suspects) >= SAMPLE * MIN_SAMPLE:  # on the others only those that paid here
                others = xp.ones(len(suspects), dtype=bool)
                others[::SAMPLE] = False
                paid, relax = self._upper_fails(i, j, suspects[::SAMPLE], widths, relax,
                                                shared, shortest, fails)
                suspects, widths = suspects[others], [w for w in widths if paid.get(w)]
            self._upper_fails(i, j, suspects, widths, relax, shared, shortest, fails)
            pending = pending[~fails]
        self.stats["pairs"] += n
        self.stats["qgrams"] += n - len(pending)
        found = [(xp.empty(0, dtype=np.int64), xp.empty(0),
                  *[xp.empty(0, np.int32)] * 4)]  # (positions, values) of exact pairs
        widths = list(self.band_cost)
        # bands only where a certificate is likely (the others to the full kernel at once)
        likely = (shared[pending]
                  >= self.band_shared * xp.maximum(shortest[pending] - Q + 1, 1))
        unlikely, pending = pending[~likely], pending[likely]
        if len(pending) >= SAMPLE * MIN_SAMPLE:
            # every band on a sample; on the other pairs only the bands that paid there
            # (the values are the same whichever bands run)
            others = xp.ones(len(pending), dtype=bool)
            others[::SAMPLE] = False
            left, paid = self._bands(i, j, pending[::SAMPLE], widths, shared, shortest, total,
                                     found)
            pending, _ = self._bands(i, j, pending[others], [w for w in widths if paid.get(w)],
                                     shared, shortest, total, found)
            pending = xp.concatenate((left, pending))
        else:
            pending, _ = self._bands(i, j, pending, widths, shared, shortest, total, found)
        pending = xp.concatenate((pending, unlikely))
        self.stats["full"] += len(pending)
        return tuple(xp.concatenate(c) for c in zip(*found)), pending

    @functools.cached_property
    def align(self):
        return self._full()

    def __call__(self, i, j):
        xp = self.xp
        found, pending = self.settle(i, j)
        if len(pending):
            found = tuple(xp.concatenate(c)
                          for c in zip(found, (pending, *self.align(i[pending], j[pending]))))
        order = xp.argsort(found[0])
        return tuple(c[order] for c in found)
