"""`seqpairs distance`: all-pairs SeqDist distances (pairs/distance.py) as an edge list and
other formats; `seqpairs merge`: the edge lists of shards as one.

Outputs (formats/distances.py, formats/interop.py): the sparse edge list and mothur's
column format from it; SeqDist's text format, the condensed matrix and a PHYLIP matrix.
Dense outputs need N(N-1)/2 doubles in memory; the sparse ones need memory only for the
pairs they keep. Under MPI every rank computes its share of the tiles and rank 0 writes.
"""
from __future__ import annotations

import math

from .. import backends, parallel, scoring
from ..errors import UserError
from ..formats.distances import (
    Edges,
    merge_edges,
    pair_index,
    read_edges,
    write_condensed,
    write_edges,
    write_seqdist_text,
)
from ..formats.fasta import read_unique_fasta
from ..formats.interop import write_mothur_column, write_phylip
from ..formats.tables import read_tsv
from ..pairs import tiling
from ..pairs.distance import compute
from ..pairs.identity import IDDEFS
from .options import fraction, number, shard, threads


def load_tiles(args, seqs):
    """Bins and tiles from --bins/--tiles, or made here with the default binning."""
    if bool(args.bins) != bool(args.tiles):
        raise UserError("--bins and --tiles go together")
    if args.tiles:
        bins = read_tsv(args.bins, tiling.BIN_COLUMNS)
        tiles = read_tsv(args.tiles, tiling.TILE_COLUMNS)
        if (int(bins["count"].sum()) != seqs.n
                or int(tiles["pairs"].sum()) != seqs.n * (seqs.n - 1) // 2):
            raise UserError(f"{args.tiles}: tiles do not cover the pairs of {args.input} "
                            "(rerun `seqpairs binning` on it)")
        return bins, tiles
    bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
    return bins, tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)


def run(args) -> None:
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
    bins, tiles = load_tiles(args, seqs)
    if args.shard:  # this job's share of the tiles, split like MPI ranks
        index, count = args.shard
        tiles = tiles[parallel.assign(tiles["cells"], count) == index]
    executor = parallel.current()
    tiles = tiles.iloc[executor.share(tiles["cells"])]
    edges, dense = compute(
        seqs, bins, tiles, backend=backends.select(args.backend, executor.device),
        scheme=scoring.get(args.scoring), threads=args.threads, max_distance=args.max_distance,
        candidate_identity=args.candidate_identity, iddef=args.iddef, dense=dense)
    columns = executor.gather(pair_index(edges.i, edges.j), edges.columns())
    if dense is not None:
        dense = executor.merge_dense(dense)
    if not executor.root:
        return
    edges = Edges(seqs.n, edges.ids, *columns, max_distance=edges.max_distance,
                  candidate_identity=edges.candidate_identity, iddef=edges.iddef)
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


def run_merge(args) -> None:
    write_edges(args.edges, merge_edges([read_edges(path) for path in args.input]))


def register(sub) -> None:
    p = sub.add_parser("distance", help="all-pairs global alignment distances (SeqDist)")
    p.add_argument("-i", "--input", required=True, help="unique sequences (FASTA, ACGT)")
    p.add_argument("--bins", help="bin manifest from `seqpairs binning` (with --tiles)")
    p.add_argument("--tiles", help="tiles from `seqpairs binning`; default: made here")
    p.add_argument("--scoring", choices=scoring.names("distance"), default="seqdist",
                   help="scoring scheme (default seqdist)")
    p.add_argument("--backend", choices=backends.NAMES, default="auto")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
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
    p.add_argument("--max-distance", type=number(0.0, infinite=True), default=math.inf,
                   help="edge list keeps pairs with distance <= this (default: all)")
    p.add_argument("--candidate-identity", type=fraction, default=None,
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
