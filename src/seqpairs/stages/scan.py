"""`seqpairs scan`: queries against long targets (a genome, a concatenated database), the
best separated local alignments of each query in each target record (pairs/scan.py:
SSCA#1's kernels 1 and 2). Writes one row per hit (formats/hits.py's columns). Under MPI
the ranks pull blocks of the targets (by cost) and rank 0 gathers their peaks, finds the
hits and writes the table: the same bytes for any number of ranks."""
from __future__ import annotations

import functools

import numpy as np

from .. import backends, parallel
from ..backends.alignments import WINDOW_OPS
from ..errors import UserError
from ..formats import hits as hit_table
from ..formats.fasta import read_coded_set
from ..pairs import scan as engine
from .options import integer, local_scheme, local_scheme_options, threads

# SSCA#1's scores (match +5, mismatch -3, a gap of k letters 8 + k): --preset ssca1
PRESETS = {"ssca1": {"match": 5, "mismatch": -3, "gap_open": 8, "gap_extend": 1}}


def run(args) -> None:
    executor = parallel.current()
    if args.preset:
        if args.alphabet != "dna" or args.matrix:
            raise UserError(f"--preset {args.preset} scores DNA; it excludes --matrix and "
                            "--alphabet protein")
        for key, value in PRESETS[args.preset].items():
            if getattr(args, key) is None:
                setattr(args, key, value)
    scheme = local_scheme(args)
    columns = hit_table.parse_columns(args.columns)
    query_ids, q_codes, q_offsets = read_coded_set(args.query, scheme,
                                                   max_length=engine.MAX_QUERY)
    target_ids, t_codes, t_offsets = read_coded_set(args.target, scheme, max_length=None)
    queries = [q_codes[a:b] for a, b in zip(q_offsets[:-1], q_offsets[1:])]
    targets = [t_codes[a:b] for a, b in zip(t_offsets[:-1], t_offsets[1:])]
    backend = backends.select(args.backend, executor.device)
    slots = engine.slots(backend, scheme, queries, args.threads)
    blocks = engine.plan(scheme, queries, targets, args.separation, None, args.top,
                         args.min_score, slots * executor.size, engine.per_call(backend))
    found = engine.block_peaks(backend, scheme, queries, targets, blocks, args.top,
                               args.min_score, args.threads,
                               work=engine.in_waves(blocks, slots, executor.pull,
                                                      engine.per_call(backend)))
    gathered = executor.gather(found[0], found[1:])
    if not executor.root:
        return
    every = np.arange(len(blocks["lo"]))  # gathered in block order, from all ranks
    hits = engine.hits(backend, scheme, queries, targets, blocks, every, *gathered,
                       args.top, args.threads, trace=hit_table.traced(columns))
    alphabet = np.array(list(scheme.alphabet))

    @functools.cache
    def target_letters(k):  # whole records, made once each
        return "".join(alphabet[targets[k]])

    table = hit_table.Table(hits, np.array(list(query_ids), dtype=object),
                            np.array(list(target_ids), dtype=object), np.diff(q_offsets),
                            np.diff(t_offsets), lambda k: "".join(alphabet[queries[k]]),
                            target_letters, WINDOW_OPS)
    hit_table.write(args.output, table, columns)


def register(sub) -> None:
    p = sub.add_parser("scan", help="best local alignments of queries along long targets "
                       "(genomes; SSCA#1 kernels 1 and 2)")
    p.add_argument("-q", "--query", required=True, help="query sequences (FASTA)")
    p.add_argument("-t", "--target", required=True,
                   help="target sequences (FASTA, records of any length, each its own "
                   "coordinates)")
    p.add_argument("-o", "--output", required=True, help="the hits (TSV)")
    local_scheme_options(p)
    p.add_argument("--preset", choices=tuple(PRESETS),
                   help="ssca1: match 5, mismatch -3, gap-open 8, gap-extend 1 (options "
                   "given beside it win)")
    p.add_argument("--top", type=integer(1), default=200,
                   help="hits per query and target record, best first (default 200, as "
                   "SSCA#1's kernel 1)")
    p.add_argument("--min-score", type=integer(1), default=1,
                   help="report hits scoring at least this (default 1)")
    p.add_argument("--separation", type=integer(0),
                   help="a hit's end is the best of the target ends within this many "
                   "letters either side (default: the query's length)")
    p.add_argument("--columns", default=hit_table.DEFAULT,
                   help=f"output columns, comma-separated, or blast6; default "
                   f"{hit_table.DEFAULT}; known: {', '.join(hit_table.COLUMNS)}")
    p.add_argument("--backend", choices=backends.NAMES, default="auto")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.set_defaults(func=run)
