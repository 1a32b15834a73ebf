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
tiles it pulls from rank 0 (parallel.Executor.pull, by cost) into its own runs, on disk,
each cut into fixed ranges of keys, several a rank (key_ranges); each rank merges the
slices of every rank's runs in its ranges, read from their folders beside the output
(no exchange of pairs between the ranks), and writes its ranges' parts of each output
into the one file at once (formats/edge_writer.py: the edge list's rows, rank 0 the
zip's headers last; mothur's lines after the bytes of the ranges before). The output is
the same bytes whoever computed which tile.
"""
from __future__ import annotations

import contextlib
import logging
import math
import shutil
from pathlib import Path

import numpy as np

from .. import backends, parallel, scoring
from ..errors import UserError
from ..formats.atomic import STDIO
from ..formats.distances import (
    Edges,
    sequence_digest,
    write_condensed,
    write_matrix,
    write_seqdist_text,
)
from ..formats.edge_writer import merge_edge_lists, one_file, write_edges_together
from ..formats.fasta import read_unique_fasta
from ..formats.interop import mothur_lines, write_mothur_column, write_phylip
from ..formats.runs import FileRun, Spill, even_splits, fewer_runs, pair_chunks
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
    runtime_threads,
    shard,
    threads,
)

log = logging.getLogger("seqpairs.distance")
MEMORY = 256  # MiB for the kept pairs, default of --memory
BINARY_FORMATS = ("edges", "condensed")  # the --format outputs that cannot be standard output
MIB = 1 << 20
COPY = 1 << 24  # bytes copied at a time
# Key ranges a worker under MPI: more than one, so that kept pairs crowded in one part of
# the input (reads sorted by abundance) are shared among the workers.
RANGES_PER_WORKER = 8
memory = number(1.0, MAX_MEMORY)  # the type of --memory


def load_tiles(args, seqs):
    """Bins and tiles from --bins/--tiles (checked against the sequences), or made here
    with the default binning."""
    if bool(args.bins) != bool(args.tiles):
        raise UserError("--bins and --tiles go together")
    if args.tiles:
        from ..formats.tables import read_tsv  # pandas: only for a tiling read from files

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
    if args.mothur == STDIO and executor.size > 1:
        raise UserError("--mothur -: under MPI every rank writes its part of the file: give "
                        "a file name")
    executor.set_timeout(args.rank_timeout)
    budget = int(args.memory * MIB)
    sparse = args.edges or args.mothur
    with contextlib.ExitStack() as spills:
        spill = (spills.enter_context(Spill(budget, Path(sparse).parent, Path(sparse).name,
                                            about.layout)) if sparse else None)
        try:  # a worker's own trouble (its disk full) must end every worker
            _, dense = compute(
                seqs, bins, tiles, backend=backends.select(args.backend, executor.device),
                scheme=scheme, threads=args.threads,
                max_distance=args.max_distance, candidate_identity=args.candidate_identity,
                iddef=args.iddef, dense=dense, kept=spill.add if spill else None,
                prune=args.prune, edges=bool(sparse),
                work=executor.pull(tiles["cells"]), eta=executor.size == 1)
            if dense is not None:
                dense = executor.merge_dense(dense)
            if spill:
                owned, counts = key_ranges(executor, spill, seqs.n)
        except UserError as error:
            executor.fail(error)
        if args.edges:
            write_edges_together(executor, args.edges, about, counts, owned, budget,
                                 args.threads or runtime_threads())
        if args.mothur:
            write_mothur_together(executor, args.mothur, seqs.ids, owned, spill,
                                  args.max_distance)
        executor.barrier()  # every worker has read the slices of the others' runs it owns
    if not executor.root:
        return
    if args.seqdist:
        write_seqdist_text(args.seqdist, dense, seqs.ids if args.ids else None)
    if args.condensed:
        write_condensed(args.condensed, seqs.n, dense)
    if args.matrix:
        write_matrix(args.matrix, dense)
    if args.phylip:
        write_phylip(args.phylip, dense, seqs.ids)


def key_ranges(executor, spill: Spill, n: int) -> tuple[dict, np.ndarray]:
    """The kept pairs of every worker in ranges of keys (the runs of this worker's ranges,
    no more than a merge reads at once) and every range's count. One worker holds one
    range; under MPI the keys of the n sequences' pairs are cut into RANGES_PER_WORKER
    ranges a worker, range r the worker r % size's, so that the workers' shares are about
    equal wherever the kept pairs lie in the input's order. Each worker reads the slices
    of the others' runs in its ranges (Spill.slices) in their folders beside the output:
    no pair crosses the network but through the shared file system that the output is
    written to."""
    if executor.size == 1:
        runs = spill.finish()
        log.info("kept pairs merged: %d in %d runs", spill.count, len(runs))
        return {0: runs}, np.array([spill.count])
    ranges = RANGES_PER_WORKER * executor.size
    mine = spill.slices(even_splits(n * (n - 1) // 2, ranges))
    held = [(r, *piece) for r, pieces in enumerate(mine) for piece in pieces]
    key = executor.rank * (1 << 32) + np.arange(len(held), dtype=np.int64)
    columns = tuple(np.array(column) for column in zip(*held)) if held else (
        np.empty(0, np.int64), np.empty(0, str), np.empty(0, np.int64), np.empty(0, np.int64))
    table = executor.gather(key, columns)
    where, paths, firsts, counts = executor.broadcast(table)
    owned = {}
    for r in range(executor.rank, ranges, executor.size):
        runs = [FileRun(Path(path), int(count), spill.columns, int(first), whole=False)
                for path, first, count in zip(paths[where == r], firsts[where == r],
                                              counts[where == r])]
        for run in runs:
            if not run.column("key").exists():
                raise UserError(f"{spill.scratch.folder}: rank {executor.rank} does not see "
                                f"another rank's sorted runs ({run.path.parent.name}): the "
                                "output's folder must be on a file system that every rank "
                                "shares")
        owned[r] = fewer_runs(runs, spill.budget, spill.scratch, spill.columns)
    totals = np.bincount(where, weights=counts, minlength=ranges).astype(np.int64)
    log.info("kept pairs in this worker's %d ranges of keys: %d", len(owned),
             int(totals[executor.rank::executor.size].sum()))
    return owned, totals


def write_mothur_together(executor, path, ids, owned: dict, spill: Spill,
                          max_distance: float) -> None:
    """mothur's column file written by every worker at once: each formats the lines of
    each key range it owns (`owned`: range -> runs) into its scratch folder, then copies
    them into the one file after the bytes of the ranges before. One process writes them
    straight (standard output too)."""
    if executor.size == 1:
        write_mothur_column(path, ids, pair_chunks(owned[0], spill.budget, spill.layout),
                            max_distance)
        return
    shares = {}
    try:
        for r, runs in owned.items():
            shares[r] = spill.scratch.path()
            with open(shares[r], "w") as text:
                text.writelines(mothur_lines(ids, pair_chunks(runs, spill.budget, spill.layout),
                                             max_distance))
    except OSError as error:
        executor.fail(spill.scratch.error(error))
    sizes = executor.gather(np.array(list(shares), np.int64),
                            (np.array([share.stat().st_size for share in shares.values()],
                                      np.int64),))
    sizes = executor.broadcast(sizes[0] if executor.root else None)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    with one_file(executor, path, int(sizes.sum())) as fh:
        for r, share in shares.items():
            fh.seek(int(starts[r]))
            with open(share, "rb") as part:
                shutil.copyfileobj(part, fh, COPY)
            share.unlink()


def run_merge(args) -> None:
    merge_edge_lists(args.input, args.edges, int(args.memory * MIB),
                     args.threads or runtime_threads())


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
    m.add_argument("--threads", type=threads, default=None,
                   help="threads writing the merged edge list (default: all cores)")
    m.set_defaults(func=run_merge)
