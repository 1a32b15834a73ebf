"""`seqpairs distance`: all-pairs distances (pairs/distance.py) as an edge list and other
formats; `seqpairs merge`: the edge lists of shards as one.

--scoring seqdist (the default) gives SeqDist's distances; an affine scheme (vsearch)
gives 1 - identity by --iddef of the alignment vsearch's allpairs_global would make,
and its edge list holds the counts the filter needs to keep pairs without aligning
again (formats/distances.py).

Outputs (formats/distances.py, formats/interop.py): the sparse edge list and mothur's
column format from it; SeqDist's text format, the condensed matrix and a PHYLIP matrix.
Dense outputs need N(N-1)/2 doubles in memory. The kept pairs of the sparse ones stay
within --memory: beyond it they are sorted runs in a temporary folder beside the output
(formats/runs.py), merged while the output is written. Under MPI every rank computes the
tiles it pulls from rank 0 (parallel.Executor.pull, by cost) into its own runs and sends
them to rank 0 merged, piece by piece, where each rank's pairs become one run as they
come, not sorted again; rank 0 merges the runs and writes. The output is the same bytes
whoever computed which tile.
"""
from __future__ import annotations

import contextlib
import logging
import math
from pathlib import Path

from .. import backends, parallel, scoring
from ..errors import UserError
from ..formats.atomic import STDIO
from ..formats.distances import (
    Edges,
    sequence_digest,
    write_condensed,
    write_edge_stream,
    write_matrix,
    write_seqdist_text,
)
from ..formats.fasta import read_unique_fasta
from ..formats.interop import write_mothur_column, write_phylip
from ..formats.runs import Spill, edge_columns, merge_edge_lists, pair_chunks
from ..formats.tables import read_tsv
from ..pairs import tiling
from ..pairs.distance import compute
from ..pairs.identity import IDDEFS
from ..parallel.mpi import DEFAULT_TIMEOUT
from .options import (
    MAX_MEMORY,
    MAX_RANK_TIMEOUT,
    fraction,
    number,
    path_not_stdio,
    shard,
    threads,
)

log = logging.getLogger("seqpairs.distance")
MEMORY = 256  # MiB for the kept pairs, default of --memory
BINARY_FORMATS = ("edges", "condensed")  # the --format outputs that cannot be standard output
MIB = 1 << 20
memory = number(1.0, MAX_MEMORY)  # the type of --memory


def load_tiles(args, seqs):
    """Bins and tiles from --bins/--tiles (checked against the sequences), or made here
    with the default binning."""
    if bool(args.bins) != bool(args.tiles):
        raise UserError("--bins and --tiles go together")
    if args.tiles:
        bins = tiling.check_bins(seqs.lengths, read_tsv(args.bins, tiling.BIN_COLUMNS),
                                 args.bins, args.input)
        tiles = tiling.check_tiles(seqs.lengths, bins, read_tsv(args.tiles, tiling.TILE_COLUMNS),
                                   args.tiles, args.input)
        return bins, tiles
    bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
    return bins, tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)


def run(args) -> None:
    if args.output:
        if args.format in BINARY_FORMATS and args.output == STDIO:
            raise UserError(f"-o -: --format {args.format} is a binary file; standard output "
                            "takes text outputs only")
        setattr(args, args.format, args.output)
    dense = bool(args.seqdist or args.condensed or args.phylip or args.matrix)
    if not (args.edges or args.mothur or dense):
        raise UserError("nothing to write: give -o with --format, or "
                        "--edges/--mothur/--seqdist/--condensed/--phylip/--matrix")
    if args.shard and (dense or args.mothur):
        raise UserError("--shard writes an edge list (merge shards with `seqpairs merge`)")
    if args.mothur and math.isinf(args.max_distance):
        raise UserError("--mothur writes the pairs within --max-distance: give one (mothur's "
                        "cutoff)")
    if args.seqdist is None and args.ids:
        raise UserError("--ids applies to the SeqDist text output")
    scheme = scoring.get(args.scoring)
    seqs = read_unique_fasta(args.input, scheme.alphabet)
    bins, tiles = load_tiles(args, seqs)
    # what the edge list is made from; its pairs come from the runs
    about = Edges(seqs.n, seqs.ids, None, None, {}, max_distance=args.max_distance,
                  candidate_identity=(math.nan if args.candidate_identity is None
                                      else args.candidate_identity),
                  iddef=args.iddef, sequences=sequence_digest(seqs.ids, seqs.seqs),
                  scoring=args.scoring).empty()
    if args.shard:  # this job's share of the tiles, split like MPI ranks
        about.shard, about.shards = args.shard
        about.tiling = tiling.tiling_digest(bins, tiles)
        tiles = parallel.shard_tiles(tiles, about.shard, about.shards)
    executor = parallel.current()
    executor.set_timeout(args.rank_timeout)
    budget = int(args.memory * MIB)
    sparse = args.edges or args.mothur
    with (Spill(budget, Path(sparse).parent, Path(sparse).name, about.layout) if sparse
          else contextlib.nullcontext()) as spill:
        try:  # a worker's own trouble (its disk full) must end every worker
            _, dense = compute(
                seqs, bins, tiles, backend=backends.select(args.backend, executor.device),
                scheme=scheme, threads=args.threads,
                max_distance=args.max_distance, candidate_identity=args.candidate_identity,
                iddef=args.iddef, dense=dense, kept=spill.add if spill else None,
                prune=args.prune, edges=bool(sparse),
                work=executor.pull(tiles["cells"]), eta=executor.size == 1)
            if spill:  # pieces of at most a quarter of the budget at once on the root
                piece = max(budget // (4 * executor.size * spill.record), 1)
                executor.stream(spill.sorted_pieces(piece), spill.add_sorted)
                if executor.size > 1 and executor.root:
                    log.info("kept pairs on the root: %d", spill.count)
            if dense is not None:
                dense = executor.merge_dense(dense)
            runs = spill.finish(single=bool(args.edges)) if spill and executor.root else None
            if runs is not None:
                log.info("kept pairs merged: %d runs", len(runs))
        except UserError as error:
            executor.fail(error)
        if not executor.root:
            return
        if args.edges:
            write_edge_stream(args.edges, about, spill.count,
                              edge_columns(runs, budget, about.layout))
            log.info("edge list written: %s", args.edges)
        if args.mothur:
            write_mothur_column(args.mothur, seqs.ids, pair_chunks(runs, budget, about.layout),
                                args.max_distance)
    if args.seqdist:
        write_seqdist_text(args.seqdist, dense, seqs.ids if args.ids else None)
    if args.condensed:
        write_condensed(args.condensed, seqs.n, dense)
    if args.matrix:
        write_matrix(args.matrix, dense)
    if args.phylip:
        write_phylip(args.phylip, dense, seqs.ids)


def run_merge(args) -> None:
    merge_edge_lists(args.input, args.edges, int(args.memory * MIB))


def register(sub) -> None:
    p = sub.add_parser("distance", help="all-pairs global alignment distances (SeqDist, or "
                       "1 - identity under an affine scheme)")
    p.add_argument("-i", "--input", required=True,
                   help="unique sequences (FASTA: ACGT, or the letters of --scoring)")
    p.add_argument("--bins", help="bin manifest from `seqpairs binning` (with --tiles)")
    p.add_argument("--tiles", help="tiles from `seqpairs binning`; default: made here")
    p.add_argument("--scoring", choices=scoring.names("distance"), default="seqdist",
                   help="scoring scheme (default seqdist: SeqDist's distance; vsearch: "
                   "1 - identity by --iddef of vsearch's global alignment)")
    p.add_argument("--backend", choices=(*backends.NAMES, backends.HYBRID), default="auto",
                   help="auto (the GPU if CuPy sees one, else the CPU), cpu, gpu, or hybrid: "
                   "the GPU and the CPU cores beside it (all --threads but one) taking tiles "
                   "as they finish, the cores retiring before they could delay the GPU")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.add_argument("-o", "--output", help="output file, in --format")
    p.add_argument("--format", choices=("seqdist", "edges", "condensed", "mothur", "phylip"),
                   default="edges",
                   help="format of -o (default edges)")
    p.add_argument("--edges", type=path_not_stdio, help="sparse edge list (.npz)")
    p.add_argument("--seqdist", help="SeqDist text output")
    p.add_argument("--ids", action="store_true", help="write ids in the SeqDist text output")
    p.add_argument("--condensed", type=path_not_stdio,
                   help="condensed matrix (.npy, SciPy order)")
    p.add_argument("--matrix", type=path_not_stdio,
                   help="every pair's distance in SeqDist order (.npy), which the workflow "
                   "turns into its text and matrix exports")
    p.add_argument("--mothur", help="mothur column distances (.dist) of the pairs within "
                   "--max-distance")
    p.add_argument("--phylip", help="PHYLIP lower-triangular matrix (small N)")
    p.add_argument("--max-distance", type=number(0.0, infinite=True), default=math.inf,
                   help="edge list keeps pairs with distance <= this (default: all)")
    p.add_argument("--candidate-identity", type=fraction, default=None,
                   help="edge list also keeps pairs whose identity (SeqDist: its bound) "
                   "reaches this")
    p.add_argument("--iddef", type=int, choices=IDDEFS, default=2,
                   help="identity definition of --candidate-identity and of an affine "
                   "scheme's distance (vsearch's, default 2)")
    p.add_argument("--no-prune", dest="prune", action="store_false",
                   help="align every pair in full instead of pruning the pairs that provably "
                   "fail the thresholds (docs/pruning.md; the same output, slower)")
    p.add_argument("--shard", type=shard, metavar="K/N",
                   help="compute only shard K (0-based) of N of the tiles (edge list only)")
    p.add_argument("--memory", type=memory, default=MEMORY, metavar="MIB",
                   help=f"memory for the kept pairs, in MiB; beyond it they are sorted runs "
                   f"in a temporary folder beside the output (default {MEMORY})")
    p.add_argument("--rank-timeout", type=number(0.001, MAX_RANK_TIMEOUT),
                   default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="under MPI: a rank silent this long (stopped, node hung) ends the job "
                   f"with an error (default {DEFAULT_TIMEOUT:g})")
    p.set_defaults(func=run)

    m = sub.add_parser("merge", help="join the edge lists of distance shards into one")
    m.add_argument("-i", "--input", nargs="+", required=True, help="shard edge lists (.npz)")
    m.add_argument("--edges", required=True, type=path_not_stdio,
                   help="merged edge list (.npz)")
    m.add_argument("--memory", type=memory, default=MEMORY, metavar="MIB",
                   help=f"memory for the pairs, in MiB; the shards are sorted runs, merged "
                   f"in a temporary folder beside the output (default {MEMORY})")
    m.set_defaults(func=run_merge)
