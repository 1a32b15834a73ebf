"""All-pairs SeqDist distances (the distance stage's engine): the tiles' pairs through a
backend's SeqDist kernels, keeping the pairs a filter asks for and, on request, every
distance. Pairs are built, aligned, filtered and compacted in the backend's own arrays (on
the GPU for the GPU backend); only the kept pairs (and dense distances) reach the host.

When max_distance drops pairs and no dense output is asked for, the pairs go through the
backend's exact pruning (pairs/prune.py, docs/pruning.md: a q-gram counting filter and
banded alignments with a certificate) where the backend has its kernels. The pairs left
(all of them without pruning) go, on a backend with a screen (the GPU), first through
the screen, and only the pairs whose distance passes or whose screen_bound reaches
candidate_identity are aligned again in full. Either way the exact filter runs on exact
values, so the edge list is the same as one full pass (`prune=False`).

The kept pairs are returned as an Edges, or handed batch by batch to a `kept` function
(formats.runs.Spill.add: bounded memory for any number of kept pairs).
"""
from __future__ import annotations

import logging
import math

import numpy as np

from ..formats.distances import Edges, pair_index, sequence_digest
from ..progress import Progress
from . import tiling
from .identity import screen_bound, upper_bound
from .prune import Pruner

log = logging.getLogger("seqpairs.distance")
KEPT_SLICE = 1 << 18  # kept pairs handed to `kept` at a time (10 MiB on the host)


def batches(tiles, pairs_per_batch: int):
    """Consecutive tiles grouped into runs of at least pairs_per_batch pairs (the last may be short)."""
    group, count = [], 0
    for tile in tiles.itertuples(index=False):
        group.append(tile)
        count += tile.pairs
        if count >= pairs_per_batch:
            yield group
            group, count = [], 0
    if group:
        yield group


def steps(cells, most: float):
    """(start, stop) of consecutive runs of pairs whose cells (host array, per pair) add up
    to at most `most` each, with at least one pair a run."""
    total = np.cumsum(cells)
    start = 0
    while start < len(cells):
        stop = max(start + 1, int(np.searchsorted(total, total[start] - cells[start] + most,
                                                  side="right")))
        yield start, stop
        start = stop


def pruner(backend, seqs, scheme, max_distance, candidate_identity, iddef, threads, dense,
           prune, rest):
    """The exact pruning when asked for, possible on the backend and useful: a distance
    limit drops pairs and no dense output needs every pair. `rest`: what aligns the pairs
    it cannot settle (Pruner's)."""
    if (not prune or dense or None in (backend.seqdist_band, backend.seqdist_upper,
                                       backend.qgram_shared) or max_distance == math.inf):
        return None
    return Pruner(backend, seqs, scheme, threads, max_distance, candidate_identity, iddef,
                  rest=rest)


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


def compute(seqs, bins, tiles, *, backend, scheme, threads=None, max_distance=math.inf,
            candidate_identity=None, iddef=2, dense=False, kept=None, prune=True,
            edges=True, work=None, eta=True):
    """Distances of every pair in `tiles` under a SeqDistScheme on `backend`.

    Returns (edges, dense): the pairs with distance <= max_distance or whose identity bound
    (iddef) reaches candidate_identity, and with `dense` every pair's distance in SeqDist
    pair order (NaN for the pairs not in `tiles`), else None. With `kept`, a function, the
    kept pairs go to kept(i, j, cost, length, matches, aligned, leading) batch by batch
    instead, in no particular order, and edges is None. `prune=False` aligns every pair in
    full (the same edge list). `edges=False` (dense only) keeps no pair: every pair goes
    through the backend's screen alone where it has one (a distance needs only the cost
    and length), and edges is None. `work`: the tiles this worker computes, as lists of
    positions in `tiles` (an executor's share; default: every tile). Its progress counts
    its cells against all of `tiles`'; eta=False (one of several workers): without a
    time left.
    """
    xp, to_host = backend.xp, backend.to_host
    align = backend.seqdist(seqs.codes, seqs.offsets, scheme, threads)
    screen = screener(backend, seqs, scheme, max_distance, candidate_identity, iddef, threads)
    if not edges:
        if not dense:
            raise ValueError("compute: neither edges nor dense distances asked for")
        max_distance, candidate_identity, screen = -math.inf, None, None  # keeps no pair
        if backend.seqdist_screen is not None:
            align = backend.seqdist_screen(seqs.codes, seqs.offsets, scheme, threads)
    members = [xp.asarray(m) for m in tiling.bin_members(seqs.lengths, bins)]
    lengths = xp.asarray(seqs.lengths)
    dense_out = np.full(seqs.n * (seqs.n - 1) // 2, np.nan) if dense else None

    def selected(i, j, cost, counts, bound_of):
        """The pairs the filter keeps by their distance or their identity bound."""
        keep = cost / counts[0] <= max_distance
        if candidate_identity is not None:
            keep |= bound_of(iddef, lengths[i], lengths[j], *counts) >= candidate_identity
        return keep

    def exact(i, j):
        """(positions of the pairs that may be kept, their full kernel's values): with a
        screen, only the pairs whose screened distance or bound passes are aligned."""
        if screen is None:
            return xp.arange(len(i)), *align(i, j)
        cost, *counts = screen(i, j)
        if dense_out is not None:
            dense_out[pair_index(to_host(i), to_host(j))] = to_host(cost / counts[0])
        may_keep = xp.nonzero(selected(i, j, cost, counts, screen_bound))[0]
        return may_keep, *align(i[may_keep], j[may_keep])

    pruned = pruner(backend, seqs, scheme, max_distance, candidate_identity, iddef, threads,
                    dense, prune, exact)
    batches_kept, count, pairs_done, cells_done = [], 0, 0, 0.0
    log.info("%s backend: %d pairs in %d tiles", backend.name, int(tiles["pairs"].sum()),
             len(tiles))
    progress = Progress(log, "distance", float(tiles["cells"].sum()), "cells", eta=eta,
                        rate=lambda done, elapsed: f"{done / elapsed / 1e9:.3f} GCUPS")
    lists = [np.arange(len(tiles))] if work is None else work
    for group in (group for items in lists
                  for group in batches(tiles.iloc[items], backend.pairs_per_batch)):
        pairs = [tiling.tile_pairs(tile, members, xp) for tile in group]
        all_i = xp.concatenate([p[0] for p in pairs])
        all_j = xp.concatenate([p[1] for p in pairs])
        cells = to_host(lengths[all_i] * lengths[all_j])
        for start, stop in steps(cells, backend.cells_per_call):  # progress as it goes
            i, j = all_i[start:stop], all_j[start:stop]
            may_keep, cost, *counts = (exact if pruned is None else pruned)(i, j)
            i, j = i[may_keep], j[may_keep]  # length, matches, aligned, leading
            if dense_out is not None and screen is None:
                dense_out[pair_index(to_host(i), to_host(j))] = to_host(cost / counts[0])
            keep = selected(i, j, cost, counts, upper_bound)
            on_device = tuple(a[keep] for a in (i, j, cost, *counts))
            count += len(on_device[0])
            if kept is None:
                batches_kept.append(tuple(to_host(a) for a in on_device))
            else:  # in slices: a GPU batch's pairs alone would exceed a small memory budget
                for first in range(0, len(on_device[0]), KEPT_SLICE):
                    kept(*(to_host(a[first:first + KEPT_SLICE]) for a in on_device))
            progress.update(float(cells[start:stop].sum()))
        pairs_done += len(all_i)
        cells_done += float(cells.sum())
    seconds = progress.finish()
    log.info("%s backend: %d pairs, %d kept, %.3f GCUPS, %.3f s", backend.name, pairs_done,
             count, cells_done / max(seconds, 1e-9) / 1e9, seconds)
    if pruned is not None:
        log.info("pruning: %s", pruned.summary())
    if kept is not None or not edges:
        return None, dense_out
    cols = ([np.concatenate(c) for c in zip(*batches_kept)] if batches_kept else  # no tiles
            [np.empty(0, np.int64)] * 2 + [np.empty(0)] + [np.empty(0, np.int32)] * 4)
    edges = Edges(seqs.n, np.asarray(seqs.ids), *cols, max_distance=max_distance,
                  candidate_identity=math.nan if candidate_identity is None else candidate_identity,
                  iddef=iddef, sequences=sequence_digest(seqs.ids, seqs.seqs))
    return edges, dense_out


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
