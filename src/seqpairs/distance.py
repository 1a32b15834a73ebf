"""All-pairs SeqDist distances: run the tiles through a backend, keep what was asked for.

Outputs (distfiles.py, interop.py): the sparse edge list and mothur's column format from
it; SeqDist's text format, the condensed matrix and a PHYLIP matrix. Dense outputs need
N(N-1)/2 doubles in memory; the sparse ones need memory only for the pairs they keep.
"""
from __future__ import annotations

import argparse
import logging
import math
import time

import numpy as np

from . import binning, mpi
from .distfiles import (
    Edges,
    merge_edges,
    pair_index,
    read_edges,
    write_condensed,
    write_edges,
    write_seqdist_text,
)
from .errors import UserError
from .identity import IDDEFS, screen_bound, upper_bound
from .interop import write_mothur_column, write_phylip
from .sequences import SequenceSet, read_unique_fasta
from .tables import read_tsv

log = logging.getLogger("seqpairs.distance")


def select_backend(name: str):
    """The kernel module for --backend; `auto` is the GPU when CuPy sees one, else the CPU."""
    from .backends import cpu, gpu

    if name == "cpu" or (name == "auto" and not gpu.available()):
        return cpu
    if not gpu.available():
        raise UserError("--backend gpu: no CUDA GPU visible to CuPy (is cupy installed?)")
    return gpu


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


class Progress:
    """Tiles done, GCUPS and ETA, logged at most every `every` seconds."""

    def __init__(self, total_tiles: int, total_cells: int, every: float = 10.0):
        self.total_tiles, self.total_cells, self.every = total_tiles, total_cells, every
        self.tiles = self.cells = 0
        self.start = self.last = time.perf_counter()

    def update(self, tiles: int, cells: int) -> None:
        self.tiles += tiles
        self.cells += cells
        now = time.perf_counter()
        if now - self.last >= self.every or self.tiles == self.total_tiles:
            self.last = now
            rate = self.cells / max(now - self.start, 1e-9)
            eta = (self.total_cells - self.cells) / rate if rate else float("inf")
            log.info("tiles %d/%d, %.3g cells, %.3f GCUPS, ETA %.0f s", self.tiles,
                     self.total_tiles, self.cells, rate / 1e9, eta)

    @property
    def gcups(self) -> float:
        return self.cells / max(time.perf_counter() - self.start, 1e-9) / 1e9


def screener(kernels, seqs: SequenceSet, max_distance, candidate_identity, iddef):
    """The backend's screen (backends/gpu.py) when the filter makes it pay, else None.

    It pays when the filter drops most pairs: with no distance limit every pair is kept
    and would be aligned twice, and iddef 3's bound from the screen's counts keeps nearly
    every pair.
    """
    if (not hasattr(kernels, "screener") or max_distance == math.inf
            or (candidate_identity is not None and iddef == 3)):
        return None
    return kernels.screener(seqs.codes, seqs.offsets)


def compute(seqs: SequenceSet, bins, tiles, *, backend="cpu", threads=None, max_distance=math.inf,
            candidate_identity=None, iddef=2, dense=False):
    """Distances of every pair in `tiles`. Returns (edges, dense distances or None)."""
    kernels = select_backend(backend)
    # Pairs are built, aligned, filtered and compacted in the backend's own arrays (on the
    # GPU for the GPU backend); only the kept pairs (and a dense output) reach the host.
    xp, to_host = kernels.array_module(), kernels.to_host
    align = kernels.aligner(seqs.codes, seqs.offsets, threads=threads)
    screen = screener(kernels, seqs, max_distance, candidate_identity, iddef)
    members = [xp.asarray(m) for m in binning.bin_members(seqs.lengths, bins)]
    lengths = xp.asarray(seqs.lengths)
    dense_out = np.full(seqs.n * (seqs.n - 1) // 2, np.nan) if dense else None

    def selected(i, j, cost, counts, bound_of):
        """The pairs the filter keeps by their distance or their identity bound."""
        keep = cost / counts[0] <= max_distance
        if candidate_identity is not None:
            keep |= bound_of(iddef, lengths[i], lengths[j], *counts) >= candidate_identity
        return keep

    kept = []
    progress = Progress(len(tiles), int(tiles["cells"].sum()))
    for group in batches(tiles, kernels.PAIRS_PER_BATCH):
        pairs = [binning.tile_pairs(tile, members, xp) for tile in group]
        i = xp.concatenate([p[0] for p in pairs])
        j = xp.concatenate([p[1] for p in pairs])
        if screen is not None:  # only the pairs the screen may keep are aligned in full
            cost, *counts = screen(i, j)
            if dense_out is not None:
                dense_out[pair_index(to_host(i), to_host(j))] = to_host(cost / counts[0])
            may_keep = selected(i, j, cost, counts, screen_bound)
            i, j = i[may_keep], j[may_keep]
        cost, *counts = align(i, j)  # length, matches, aligned, leading
        if dense_out is not None and screen is None:
            dense_out[pair_index(to_host(i), to_host(j))] = to_host(cost / counts[0])
        keep = selected(i, j, cost, counts, upper_bound)
        kept.append(tuple(to_host(a[keep]) for a in (i, j, cost, *counts)))
        progress.update(len(group), sum(int(tile.cells) for tile in group))
    cols = [np.concatenate(c) for c in zip(*kept)] if kept else [np.empty(0)] * 7
    edges = Edges(seqs.n, np.asarray(seqs.ids), *cols, max_distance=max_distance,
                  candidate_identity=math.nan if candidate_identity is None else candidate_identity,
                  iddef=iddef)
    log.info("%s backend: %d pairs, %d kept, %.3f GCUPS", kernels.NAME,
             int(tiles["pairs"].sum()), len(edges), progress.gcups)
    return edges, dense_out


def load_tiles(args, seqs: SequenceSet):
    """Bins and tiles from --bins/--tiles, or made here with the default binning."""
    if bool(args.bins) != bool(args.tiles):
        raise UserError("--bins and --tiles go together")
    if args.tiles:
        bins = read_tsv(args.bins, binning.BIN_COLUMNS)
        tiles = read_tsv(args.tiles, binning.TILE_COLUMNS)
        if int(bins["count"].sum()) != seqs.n or int(tiles["pairs"].sum()) != seqs.n * (seqs.n - 1) // 2:
            raise UserError(f"{args.tiles}: tiles do not cover the pairs of {args.input} "
                            "(rerun `seqpairs bin` on it)")
        return bins, tiles
    bins = binning.make_bins(seqs.lengths, binning.BIN_WIDTH)
    return bins, binning.make_tiles(seqs.lengths, bins, binning.TILE_PAIRS)


def gather(w: mpi.World, seqs: SequenceSet, edges: Edges, dense):
    """Rank 0: every rank's kept pairs and dense outputs; other ranks: (None, None)."""
    columns = mpi.gather_arrays(w, (edges.i, edges.j, edges.cost, edges.length, edges.matches,
                                    edges.aligned, edges.leading))
    dense = mpi.gather_dense(w, dense) if dense is not None else None
    if not w.root:
        return None, None
    merged = Edges(seqs.n, edges.ids, *columns, max_distance=edges.max_distance,
                   candidate_identity=edges.candidate_identity, iddef=edges.iddef)
    return merged, dense


def run(args) -> None:
    w = mpi.world()
    if args.output:
        setattr(args, args.format, args.output)
    dense = bool(args.seqdist or args.condensed or args.phylip)
    if not (args.edges or args.mothur or dense):
        raise UserError("nothing to write: give -o with --format, or "
                        "--edges/--mothur/--seqdist/--condensed/--phylip")
    if args.shard and (dense or args.mothur):
        raise UserError("--shard writes an edge list (merge shards with `seqpairs merge`)")
    if args.mothur and math.isinf(args.max_distance):
        raise UserError("--mothur writes the pairs within --max-distance: give one (mothur's "
                        "cutoff)")
    if args.seqdist is None and args.ids:
        raise UserError("--ids applies to the SeqDist text output")
    seqs = read_unique_fasta(args.input)
    if seqs.n < 2:
        raise UserError(f"{args.input}: need at least 2 sequences, found {seqs.n}")
    bins, tiles = load_tiles(args, seqs)
    if args.shard:  # this job's share of the tiles, split like MPI ranks
        index, count = args.shard
        tiles = tiles[mpi.assign(tiles, count) == index]
    if w.size > 1:  # this rank's share of the tiles; the GPU of its node-local rank
        tiles = tiles[mpi.assign(tiles, w.size) == w.rank]
        if args.backend != "cpu":
            from .backends import gpu

            if gpu.available():
                gpu.use_device(w.local_rank)
    edges, dense = compute(
        seqs, bins, tiles, backend=args.backend, threads=args.threads,
        max_distance=args.max_distance, candidate_identity=args.candidate_identity,
        iddef=args.iddef, dense=dense)
    if w.size > 1:
        edges, dense = gather(w, seqs, edges, dense)
        if not w.root:
            return
    if args.edges:
        write_edges(args.edges, edges)
    if args.seqdist:
        write_seqdist_text(args.seqdist, dense, seqs.ids if args.ids else None)
    if args.condensed:
        write_condensed(args.condensed, seqs.n, dense)
    if args.mothur:
        write_mothur_column(args.mothur, edges)
    if args.phylip:
        write_phylip(args.phylip, dense, seqs.ids)


def register(sub) -> None:
    p = sub.add_parser("distance", help="all-pairs global alignment distances (SeqDist)")
    p.add_argument("-i", "--input", required=True, help="unique sequences (FASTA, ACGT)")
    p.add_argument("--bins", help="bin manifest from `seqpairs bin` (with --tiles)")
    p.add_argument("--tiles", help="tiles from `seqpairs bin`; default: made here")
    # The distance kernels score SeqDist; the vsearch preset lives in `seqpairs filter`.
    p.add_argument("--scoring", choices=("seqdist",), default="seqdist", help="scoring scheme")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("-o", "--output", help="output file, in --format")
    p.add_argument("--format", choices=("seqdist", "edges", "condensed", "mothur", "phylip"),
                   default="edges",
                   help="format of -o (default edges)")
    p.add_argument("--edges", help="sparse edge list (.npz)")
    p.add_argument("--seqdist", help="SeqDist text output")
    p.add_argument("--ids", action="store_true", help="write ids in the SeqDist text output")
    p.add_argument("--condensed", help="condensed matrix (.npy, SciPy order)")
    p.add_argument("--mothur", help="mothur column distances (.dist) of the pairs within "
                   "--max-distance")
    p.add_argument("--phylip", help="PHYLIP lower-triangular matrix (small N)")
    p.add_argument("--max-distance", type=float, default=math.inf,
                   help="edge list keeps pairs with distance <= this (default: all)")
    p.add_argument("--candidate-identity", type=float, default=None,
                   help="edge list also keeps pairs whose identity bound reaches this")
    p.add_argument("--iddef", type=int, choices=IDDEFS, default=2,
                   help="identity definition of --candidate-identity (vsearch's, default 2)")
    p.add_argument("--shard", type=shard, metavar="K/N",
                   help="compute only shard K (0-based) of N of the tiles (edge list only)")
    p.set_defaults(func=run)

    m = sub.add_parser("merge", help="join the edge lists of distance shards into one")
    m.add_argument("-i", "--input", nargs="+", required=True, help="shard edge lists (.npz)")
    m.add_argument("--edges", required=True, help="merged edge list (.npz)")
    m.set_defaults(func=run_merge)


def shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N) with 0 <= K < N."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N") from None
    if not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= K < N")
    return index, count


def run_merge(args) -> None:
    write_edges(args.edges, merge_edges([read_edges(path) for path in args.input]))
