"""All-pairs distances (the distance stage's engine): the tiles' pairs through a backend's
kernels for the scheme's family (PASSES; SeqDist: seqdist with its screen and pruning;
affine: affine_counts), keeping the pairs a filter asks for and, on request, every
distance. Pairs are built, aligned, filtered and compacted in the backend's own arrays
(on the GPU for the GPU backend); only the kept pairs (and dense distances) reach the host.

Under SeqDist, when max_distance drops pairs and no dense output is asked for, the pairs
go through the backend's exact pruning (pairs/prune.py, docs/pruning.md: a q-gram
counting filter and banded alignments with a certificate) where the backend has its
kernels. The pairs left (all of them without pruning) go, on a backend with a screen (the
GPU), first through the screen where it pays (SeqDistPass.exact: on a sample of each
batch first), and only the pairs whose distance passes or whose screen_bound reaches
candidate_identity are aligned again in full. Either way the exact
filter runs on exact values, so the edge list is the same as one full pass
(`prune=False`). Under an affine scheme every pair is aligned once: its counts give its
identity exactly.

The kept pairs are returned as an Edges, or handed batch by batch to a `kept` function
(formats.runs.Spill.add: bounded memory for any number of kept pairs).
"""
from __future__ import annotations

import itertools
import logging
import math
import threading

import numpy as np

from .. import parallel, scoring
from ..backends.common import AFFINE_COUNTS
from ..formats.distances import Edges, pair_index, sequence_digest
from ..progress import Progress
from . import prune as pruning
from . import tiling
from .identity import AffineScreen, screen_bound, upper_bound, vsearch_percent
from .prune import MIN_SAMPLE, SAMPLE, Pruner

log = logging.getLogger("seqpairs.distance")
KEPT_SLICE = 1 << 18  # kept pairs handed to `kept` at a time (10 MiB on the host)


def batches(tiles, pairs_per_batch: int):
    """Consecutive tiles grouped into runs of at least pairs_per_batch pairs (the last may be short)."""
    group, count = [], 0
    for tile in tiles:
        group.append(tile)
        count += tile["pairs"]
        if count >= pairs_per_batch:
            yield group
            group, count = [], 0
    if group:
        yield group


def steps(cells, most: float, to_host=np.asarray):
    """(start, stop) of consecutive runs of pairs whose cells (per pair; to_host brings
    them to NumPy) add up to at most `most` each, with at least one pair a run. Without a
    limit, one run and the cells stay where they are (a GPU batch's 16 M would take a
    transfer and a cumulative sum on the host for nothing)."""
    if most == math.inf:
        yield 0, len(cells)
        return
    cells = to_host(cells)
    total = np.cumsum(cells)
    start = 0
    while start < len(cells):
        stop = max(start + 1, int(np.searchsorted(total, total[start] - cells[start] + most,
                                                  side="right")))
        yield start, stop
        start = stop


def pruner(backend, seqs, scheme, max_distance, candidate_identity, iddef, threads, dense,
           prune):
    """The exact pruning when asked for, possible on the backend and useful: a distance
    limit drops pairs, no dense output needs every pair, and the run repays the kernels'
    first compilation."""
    if (not prune or dense or None in (backend.seqdist_band, backend.seqdist_upper,
                                       backend.qgram_shared) or max_distance == math.inf
            or not pruning.worth_pruning(backend, seqs)):
        return None
    return Pruner(backend, seqs, scheme, threads, max_distance, candidate_identity, iddef)


def screener(backend, seqs, scheme, max_distance, candidate_identity, iddef, threads):
    """The backend's screen when the filter makes it pay, else None.

    It pays when the filter drops most pairs: with no distance limit every pair is kept
    and would be aligned twice, and iddef 3's bound from the screen's counts keeps nearly
    every pair.
    """
    if (backend.seqdist_screen is None or max_distance == math.inf
            or (candidate_identity is not None and iddef == 3)):
        return None
    return backend.seqdist_screen(seqs.codes, seqs.offsets, scheme, threads)


def write_dense(dense_out, to_host, i, j, distance) -> None:
    """The pairs' distances into dense_out (SeqDist pair order), when there is one."""
    if dense_out is not None:
        dense_out[pair_index(to_host(i), to_host(j))] = to_host(distance)


class SeqDistPass:
    """One step of compute() under a SeqDistScheme: pairs (i, j) -> the kept ones with
    their SeqDist columns (cost, length, matches, aligned, leading), every pair's distance
    written to `dense_out` when given; `in_order`: the kept pairs in the order of the
    pairs given (else the pairs that pruning settles come at once, the others later)."""

    def __init__(self, backend, seqs, scheme, threads, max_distance, candidate_identity,
                 iddef, dense_out, prune, in_order=True):
        self.xp, self.to_host, self.dense_out = backend.xp, backend.to_host, dense_out
        self.max_distance, self.candidate_identity, self.iddef = (max_distance,
                                                                 candidate_identity, iddef)
        self.lengths = backend.xp.asarray(seqs.lengths)
        if max_distance == -math.inf and candidate_identity is None:  # dense only
            # a distance needs only the cost and length
            self.align = backend.seqdist_dense(seqs.codes, seqs.offsets, scheme, threads)
            self.screen = None
        else:
            self.align = backend.seqdist(seqs.codes, seqs.offsets, scheme, threads)
            self.screen = screener(backend, seqs, scheme, max_distance, candidate_identity,
                                   iddef, threads)
        self.screen_cost = backend.screen_cost
        self.pruned = pruner(backend, seqs, scheme, max_distance, candidate_identity, iddef,
                             threads, dense_out is not None, prune)
        # batches whose pairs left by the pruner wait for the full kernel, up to
        # backend.full_pairs_per_call of those or pairs_per_batch held: (i, j of the pairs
        # that wait, their settled columns, positions of those left) each
        self.waiting, self.waiting_pairs, self.waiting_held = [], 0, 0
        self.in_order = in_order
        self.full_pairs_per_call = backend.full_pairs_per_call
        self.pairs_per_batch = backend.pairs_per_batch

    def selected(self, i, j, cost, counts, bound_of):
        """The pairs the filter keeps by their distance or their identity bound."""
        keep = cost / counts[0] <= self.max_distance
        if self.candidate_identity is not None:
            keep |= (bound_of(self.iddef, self.lengths[i], self.lengths[j], *counts)
                     >= self.candidate_identity)
        return keep

    def exact(self, i, j):
        """(positions of the pairs that may be kept, in order; their full kernel's values),
        every pair's distance to dense_out: with a screen, where it pays, only the pairs
        whose screened distance or bound passes are aligned in full. It pays when few
        pass: the pairs that pruning leaves are often mostly kept ones (close reads), which
        cost less aligned once than screened and then aligned. So a batch goes through
        the screen on a sample first (prune.SAMPLE), and its other pairs only if it paid
        there: the cells it spared the full kernel outweigh its own (backend.screen_cost)."""
        xp = self.xp
        positions = xp.arange(len(i))
        if self.screen is None:
            return self.aligned(i, j, positions)
        if len(i) < SAMPLE * MIN_SAMPLE:
            return self.screened(i, j, positions)
        sample = xp.zeros(len(i), dtype=bool)
        sample[::SAMPLE] = True
        first = self.screened(i, j, positions[sample])
        cells = self.lengths[i].astype(np.float64) * self.lengths[j]
        spared = float(cells[sample].sum() - cells[first[0]].sum())
        pays = spared > self.screen_cost * float(cells[sample].sum())
        rest = (self.screened if pays else self.aligned)(i, j, positions[~sample])
        columns = [xp.concatenate(c) for c in zip(first, rest)]
        order = xp.argsort(columns[0])
        return tuple(c[order] for c in columns)

    def screened(self, i, j, positions):
        """exact() of the pairs `positions` through the screen."""
        i, j = i[positions], j[positions]
        cost, *counts = self.screen(i, j)
        self.write_dense(i, j, cost / counts[0])
        may_keep = self.xp.nonzero(self.selected(i, j, cost, counts, screen_bound))[0]
        return positions[may_keep], *self.align(i[may_keep], j[may_keep])

    def aligned(self, i, j, positions):
        """exact() of the pairs `positions` aligned in full."""
        i, j = i[positions], j[positions]
        cost, *counts = self.align(i, j)
        self.write_dense(i, j, cost / counts[0])
        return positions, cost, *counts

    def write_dense(self, i, j, distance) -> None:
        write_dense(self.dense_out, self.to_host, i, j, distance)

    def kept(self, i, j, may_keep, cost, *counts):
        """(i, j, cost, length, matches, aligned, leading) of the pairs `may_keep` (positions
        in i, j, in order, with their full kernel's values) that the filter keeps."""
        i, j = i[may_keep], j[may_keep]
        keep = self.selected(i, j, cost, counts, upper_bound)
        return tuple(a[keep] for a in (i, j, cost, *counts))

    def __call__(self, i, j):
        """The kept pairs of (i, j) and of the batches before it that waited for the full
        kernel (with pruning), or None while they wait. In order (in_order): the pairs of
        each batch as it came, its kept pairs waiting with it; else its settled pairs now,
        the others when they are aligned."""
        if self.pruned is None:
            return self.kept(i, j, *self.exact(i, j))
        xp = self.xp
        settled, left = self.pruned.settle(i, j)
        now = None
        if self.in_order:  # the batch's pairs that may be kept wait, in order
            may = xp.sort(xp.concatenate((settled[0], left)))
            settled = (xp.searchsorted(may, settled[0]), *settled[1:])
            i, j, left = i[may], j[may], xp.searchsorted(may, left)
        else:
            order = xp.argsort(settled[0])
            now = self.kept(i, j, *(c[order] for c in settled))
            i, j, left = i[left], j[left], xp.arange(len(left))
            settled = tuple(c[:0] for c in settled)
        self.waiting.append((i, j, settled, left))
        self.waiting_pairs += len(left)
        self.waiting_held += len(i)
        if (self.waiting_pairs < self.full_pairs_per_call
                and self.waiting_held < self.pairs_per_batch):
            return now
        later = self.flush()
        return later if now is None else tuple(xp.concatenate(c) for c in zip(now, later))

    def flush(self):
        """The kept pairs of the batches waiting for the full kernel (None if none): their
        pairs left aligned in one call of exact() (a GPU's full kernel takes a pair's whole
        time however few its pairs: a small call per batch would cost that each time)."""
        if not self.waiting:
            return None
        xp = self.xp
        waiting, self.waiting, self.waiting_pairs, self.waiting_held = self.waiting, [], 0, 0
        positions, *values = self.exact(xp.concatenate([i[left] for i, _, _, left in waiting]),
                                        xp.concatenate([j[left] for _, j, _, left in waiting]))
        out, start = [], 0
        for i, j, settled, left in waiting:  # each batch's share of the call's results
            stop = start + len(left)
            lo, hi = (int(k) for k in xp.searchsorted(positions, xp.asarray([start, stop])))
            aligned = (left[positions[lo:hi] - start], *(v[lo:hi] for v in values))
            found = [xp.concatenate(c) for c in zip(settled, aligned)]
            order = xp.argsort(found[0])
            out.append(self.kept(i, j, *(c[order] for c in found)))
            start = stop
        return tuple(xp.concatenate(c) for c in zip(*out))

    def summary(self) -> str | None:
        return None if self.pruned is None else f"pruning: {self.pruned.summary()}"


class AffinePass:
    """One step of compute() under an AffineScheme: pairs (i, j) -> the kept ones with
    distance = 1 - identity by iddef (vsearch_percent's, exact) and the AFFINE_COUNTS of
    the alignment of j (A, the earlier sequence: vsearch's query) against i, in order
    whatever `in_order`."""

    def __init__(self, backend, seqs, scheme, threads, max_distance, candidate_identity,
                 iddef, dense_out, prune, in_order=True):
        self.to_host, self.dense_out = backend.to_host, dense_out
        self.max_distance, self.candidate_identity, self.iddef = (max_distance,
                                                                 candidate_identity, iddef)
        self.lengths = backend.xp.asarray(seqs.lengths)
        self.count = backend.affine_counts(seqs.codes, seqs.offsets, scheme, threads)
        least = 1.0 - max_distance
        if candidate_identity is not None:
            least = min(least, candidate_identity)
        # a dense output needs every pair's distance
        self.may_pass = affine_screen(backend, seqs, scheme, threads, least, iddef,
                                      prune and dense_out is None)
        self.screened = self.passed = 0

    def __call__(self, i, j):
        if self.may_pass:
            maybe = self.may_pass(j, i)
            self.screened += len(i)
            i, j = i[maybe], j[maybe]
            self.passed += len(i)
        counts = self.count(j, i)
        c = dict(zip(AFFINE_COUNTS, counts))
        percent = vsearch_percent(self.iddef, c["matches"], c["mismatches"], c["columns"],
                                  c["terminal_gaps"], c["openings"], self.lengths[j],
                                  self.lengths[i])
        distance = 1.0 - percent / 100.0
        write_dense(self.dense_out, self.to_host, i, j, distance)
        keep = distance <= self.max_distance
        if self.candidate_identity is not None:
            keep |= percent >= 100.0 * self.candidate_identity
        return tuple(a[keep] for a in (i, j, distance, *counts))

    def flush(self):
        """Nothing waits: every batch's kept pairs came with it."""
        return None

    def summary(self) -> str | None:
        return (f"affine screen: {self.passed} of {self.screened} pairs counted"
                if self.may_pass else None)


def affine_screen(backend, seqs, scheme, threads, identity: float, iddef: int, prune: bool):
    """The backend's exact screen at `identity` by iddef (identity.AffineScreen) where it
    applies (pruning on, a threshold some pairs miss, a backend and scheme with a screen),
    as a function (a, b) -> the mask of the pairs (a[k] as A) that may reach it; else
    None."""
    test = AffineScreen.at(iddef, identity, int(seqs.lengths.max(initial=1)))
    if not prune or test is None or backend.affine_screen is None:
        return None
    screen = backend.affine_screen(seqs.codes, seqs.offsets, scheme, threads)
    if screen is None:
        return None
    lengths = {np: seqs.lengths, backend.xp: backend.xp.asarray(seqs.lengths)}

    def may_pass(a, b):
        _, weight = screen(a, b, test.alpha, test.beta)
        xp = np if isinstance(a, np.ndarray) else backend.xp
        la, lb = lengths[xp][a], lengths[xp][b]
        return weight >= test.least(xp.minimum(la, lb), xp.maximum(la, lb))

    return may_pass


# Cells a second a CPU thread aligns, assumed until the helper's first list (the cheapest
# tile) has measured it: the helper takes that list only if it would finish it at this
# rate before the backend finishes the rest.
HELPER_CELLS_PER_SECOND = 0.3e9
# A helper slower than this share of the backend stays out (or leaves once measured): its
# cores' work slows the backend's host side more than it adds (H200 machine, SeqDist at
# 400 bp: 15 CPU threads added 0.6-0.8% of the cells and made the run 7-9% slower).
HELPER_LEAST_SHARE = 0.1


def helper_of(backend, threads):
    """The backend aligning tiles beside `backend` (the CPU cores beside a GPU:
    --backend hybrid) and its threads: all of `threads` (None: every core) but one, which
    the GPU's host work keeps; (None, None) without a helper or a core to spare."""
    if backend.helper is None:
        return None, None
    import numba

    spare = (threads or numba.config.NUMBA_NUM_THREADS) - 1
    return (backend.helper, spare) if spare > 0 else (None, None)


def beside(align, backend, helper, costs, items, helper_threads, known):
    """The tiles `items` (positions) aligned by a backend and its helper at once, each
    taking work lists from one WorkQueue as it finishes the last (largest first, sized by
    speed): align(worker, lists) for both. The helper begins once the backend's
    first two lists have measured its speed (the first, a probe, is mostly a compile, and
    the cores would slow that), and it retires where it would end after the
    backend (parallel.WorkQueue), or where it is too slow to pay for what it costs the
    backend (HELPER_LEAST_SHARE), so the two are never slower than the backend alone but
    for a first tile slower than HELPER_CELLS_PER_SECOND assumes. `known`: the workers'
    rates from the lists before (no probes again) and whether the helper is "out" (then
    the caller hands the next lists to the backend alone); updated here."""
    queue = parallel.WorkQueue(costs[items], 2)
    queue.rates.update(known["rates"])
    measured, stop, failed, reported = threading.Event(), threading.Event(), [], [0]
    if 0 in queue.rates:
        measured.set()

    def take(worker, rate, guess=None):
        if worker == 0 and rate is not None:
            reported[0] += 1
            if reported[0] >= 2:  # not the probe's rate: that is mostly a compile
                measured.set()
        return items[queue.take(worker, rate, guess)]

    def helper_take(rate, guess):
        fast, mine = queue.rates.get(0), rate or queue.rates.get(1)
        if fast and queue.first < queue.stop and (mine or guess) < HELPER_LEAST_SHARE * fast:
            log.info("the %s helper %s: %.3g cells/s%s, under %g of the %s backend's %.3g",
                     helper.name, "leaves" if mine else "stays out", mine or guess,
                     "" if mine else " (guessed)", HELPER_LEAST_SHARE, backend.name, fast)
            queue.leave(1)
            known["out"] = True
            return items[:0]
        return take(1, rate, guess)

    def helper_lists():
        measured.wait()
        guess = HELPER_CELLS_PER_SECOND * helper_threads
        for listed in parallel.timed(lambda rate: helper_take(rate, guess), costs,
                                     f"{helper.name} helper"):
            if stop.is_set():
                return
            yield listed

    def run_helper():
        try:
            align(helper, helper_lists())
        except BaseException as error:  # raised again by the backend's thread
            failed.append(error)

    thread = threading.Thread(target=run_helper, name="seqpairs-helper", daemon=True)
    thread.start()
    try:
        align(backend, parallel.timed(lambda rate: take(0, rate), costs,
                                      who=f"{backend.name} backend"))
    except BaseException:
        stop.set()  # the helper ends after its list
        raise
    finally:
        measured.set()
        thread.join()  # the helper takes what the backend left (it may have retired)
    known["rates"].update(queue.rates)
    if failed:
        raise failed[0]


# The engine of each scheme family (a step from pairs to kept pairs, in LAYOUTS' columns).
PASSES = {"seqdist": SeqDistPass, "affine": AffinePass}


def compute(seqs, bins, tiles, *, backend, scheme, threads=None, max_distance=math.inf,
            candidate_identity=None, iddef=2, dense=False, kept=None, prune=True,
            edges=True, work=None, eta=True, dense_sink=None):
    """Distances of every pair in `tiles` under `scheme` (a SeqDistScheme or an
    AffineScheme: PASSES) on `backend`.

    Returns (edges, dense): the kept pairs, and with `dense` every pair's distance in
    SeqDist pair order (NaN for the pairs not in `tiles`), else None. SeqDist keeps the
    pairs with distance <= max_distance or whose identity bound (iddef) reaches
    candidate_identity; an affine scheme those with distance (1 - identity by iddef)
    <= max_distance or identity >= candidate_identity. With `kept`, a function, the kept
    pairs go to kept(i, j, *columns) (their layout's, formats.distances.LAYOUTS) batch by
    batch instead, in no particular order, and edges is None. `prune=False` aligns every
    pair in full (the same edge list). `edges=False` (dense only) keeps no pair (SeqDist:
    every pair goes through the backend's screen alone where it has one), and edges is
    None. `work`: the tiles this worker computes, as lists of positions in `tiles` (the
    executor's pull; default: every tile). Its progress counts its cells against all of
    `tiles`'; eta=False (one of several workers): without a time left. `dense_sink`: an
    object that takes dense_sink[pair indices] = distances (SeqDist pair order) batch by
    batch in place of the dense array (a digest, a memory map: every pair's distance
    without holding them all); it implies dense, and dense comes back as None.
    """
    dense = dense or dense_sink is not None
    if not edges:
        if not dense:
            raise ValueError("compute: neither edges nor dense distances asked for")
        max_distance, candidate_identity = -math.inf, None  # keeps no pair
    dense_out = dense_sink if dense_sink is not None else \
        np.full(seqs.n * (seqs.n - 1) // 2, np.nan) if dense else None
    helper, helper_threads = helper_of(backend, threads)
    if helper and kept is None:  # two workers' batches come in no fixed order
        raise ValueError("compute: a backend with a helper hands its kept pairs to `kept`")
    made = {}  # id(worker) -> its step, members, lengths: made with its first list, kept
    batches_kept, totals = [], np.zeros(3)  # kept, pairs, cells
    lock = threading.Lock()  # kept, batches_kept, totals and progress, for both workers
    log.info("%s backend%s: %d pairs in %d tiles", backend.name,
             f" with {helper_threads} {helper.name} threads beside it" if helper else "",
             int(tiles["pairs"].sum()), len(tiles))
    progress = Progress(log, "distance", float(tiles["cells"].sum()), "cells", eta=eta,
                        rate=lambda done, elapsed: f"{done / elapsed / 1e9:.3f} GCUPS")

    def align(worker, lists):
        """The pairs of the tiles of `lists` on `worker` through its step."""
        lists = iter(lists)
        first = next(lists, None)
        if first is None:
            return
        if id(worker) not in made:  # a helper that never gets a list sets nothing up
            made[id(worker)] = (
                PASSES[scheme.family](worker, seqs, scheme,
                                      helper_threads if worker is helper else threads,
                                      max_distance, candidate_identity, iddef, dense_out,
                                      prune, in_order=kept is None),
                [worker.xp.asarray(m) for m in tiling.bin_members(seqs.lengths, bins)],
                worker.xp.asarray(seqs.lengths))
        step, members, lengths = made[id(worker)]
        lists = itertools.chain([first], lists)
        xp, to_host = worker.xp, worker.to_host
        for group in (group for items in lists
                      for group in batches(tiles[items], worker.pairs_per_batch)):
            pairs = [tiling.tile_pairs(tile, members, xp) for tile in group]
            all_i = xp.concatenate([p[0] for p in pairs])
            all_j = xp.concatenate([p[1] for p in pairs])
            cells = lengths[all_i] * lengths[all_j]
            for start, stop in steps(cells, worker.cells_per_call, to_host):  # progress
                on_device = step(all_i[start:stop], all_j[start:stop])
                with lock:
                    hand(on_device, to_host)
                    progress.update(float(cells[start:stop].sum()))
            with lock:
                totals[1:] += len(all_i), float(cells.sum())
        on_device = step.flush()  # the batches that waited
        with lock:
            hand(on_device, to_host)

    def hand(on_device, to_host):
        """A step's kept pairs (None: none yet) to `kept` or batches_kept, the lock held."""
        if on_device is None:
            return
        totals[0] += len(on_device[0])
        if kept is None:
            batches_kept.append(tuple(to_host(a) for a in on_device))
        else:  # in slices: a GPU batch's pairs alone would exceed a small budget
            for first in range(0, len(on_device[0]), KEPT_SLICE):
                kept(*(to_host(a[first:first + KEPT_SLICE]) for a in on_device))

    lists = [np.arange(len(tiles))] if work is None else work
    if helper:
        known = {"rates": {}, "out": False}  # what one list learnt, for the next
        for items in lists:  # each list shared between the GPU and the cores beside it
            if known["out"]:
                align(backend, [items])
            else:
                beside(align, backend, helper, tiles["cells"], items,
                       helper_threads, known)
    else:
        align(backend, lists)
    count, pairs_done, cells_done = int(totals[0]), int(totals[1]), totals[2]
    seconds = progress.finish()
    log.info("%s backend: %d pairs, %d kept, %.3f GCUPS, %.3f s", backend.name, pairs_done,
             count, cells_done / max(seconds, 1e-9) / 1e9, seconds)
    for step, _, _ in made.values():
        summary = step.summary()
        if summary:
            log.info("%s", summary)
    if dense_sink is not None:
        dense_out = None
    if kept is not None or not edges:
        return None, dense_out
    about = Edges(seqs.n, np.asarray(seqs.ids), None, None, {}, max_distance=max_distance,
                  candidate_identity=(math.nan if candidate_identity is None
                                      else candidate_identity),
                  iddef=iddef, sequences=sequence_digest(seqs.ids, seqs.seqs),
                  scoring=scoring.name_of(scheme)).empty()
    if batches_kept:
        i, j, *values = (np.concatenate(c) for c in zip(*batches_kept))
        about.i, about.j, about.values = i, j, dict(zip(about.values, values))
    return about, dense_out


def candidate_edges(seqs, threshold: float, iddef: int, *, backend, scheme,
                    threads=None, prune=True) -> Edges:
    """The edge list of the pairs whose identity bound reaches threshold (only those),
    over every pair with the default binning."""
    bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
    tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
    edges, _ = compute(seqs, bins, tiles, backend=backend, scheme=scheme, threads=threads,
                       max_distance=-math.inf, candidate_identity=threshold, iddef=iddef,
                       prune=prune)
    return edges
