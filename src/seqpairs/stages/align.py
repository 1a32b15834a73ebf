"""`seqpairs align`: batched local, global and semi-global alignment with coordinates
(pairs/align.py), for pairs given record by record (--one-to-one), as a list (--pairs),
every query against every target, or all pairs of one FASTA. Writes one row per alignment
kept (formats/hits.py)."""
from __future__ import annotations

import numpy as np

from .. import backends, parallel
from ..backends.alignments import WINDOW_OPS
from ..errors import UserError
from ..formats import hits as hit_table
from ..formats.fasta import positions, read_coded_files
from ..formats.tables import read_pair_list
from ..pairs import align as engine
from ..scoring.local import MODES
from .options import integer, local_scheme, local_scheme_options, threads

# pairs handed to the score-and-end pass at a time (database and all-pairs modes)
BATCH = 1 << 20


def _every(queries: int, targets: int):
    """(query, target) index batches of every query against every target, query-major."""
    total = queries * targets
    for lo in range(0, total, BATCH):
        k = np.arange(lo, min(total, lo + BATCH), dtype=np.int64)
        yield k // targets, k % targets


def _all_pairs(n: int):
    """(a, b) batches of every pair a < b of n sequences, in row order."""
    rows = []
    size = 0
    for a in range(n - 1):
        rows.append(a)
        size += n - 1 - a
        if size >= BATCH or a == n - 2:
            lengths = np.array([n - 1 - r for r in rows])
            first = np.repeat(np.array(rows, np.int64), lengths)
            start = np.repeat(np.cumsum(lengths) - lengths, lengths)
            second = first + 1 + (np.arange(len(first)) - start)
            yield first, second
            rows, size = [], 0


def run(args) -> None:
    executor = parallel.current()
    if executor.size > 1:  # no share of the pairs per rank yet: every rank would do all
        raise UserError(f"align runs as one process, not {executor.size} MPI ranks: start it "
                        "without mpiexec or srun -n")
    scheme = local_scheme(args)
    mode = MODES[args.mode]
    columns = hit_table.parse_columns(args.columns)
    if sum(map(bool, (args.one_to_one, args.pairs))) > 1:
        raise UserError("--one-to-one and --pairs exclude each other")
    if args.top is not None and args.one_to_one:
        raise UserError("--top keeps the best targets of each query: it needs a --target "
                        "database or all pairs, not --one-to-one")
    if args.one_to_one and not args.target:
        raise UserError("--one-to-one needs --target (aligned record by record with --query)")
    # the targets follow the queries in codes
    ids, codes, offsets = read_coded_files([args.query, *filter(None, [args.target])], scheme)
    query_ids, target_ids = ids[0], ids[-1]
    queries, targets = len(query_ids), len(target_ids) if args.target else 0
    shift = queries if args.target else 0
    if args.one_to_one:
        if queries != targets:
            raise UserError(f"--one-to-one: {args.query} has {queries} records, "
                            f"{args.target} {targets}; they must be as many")
        batches = [(np.arange(queries), np.arange(targets) + shift)]
    elif args.pairs:
        listed = read_pair_list(args.pairs, positions(query_ids), positions(target_ids),
                                args.query, args.target or args.query)
        batches = [(listed["query_index"].to_numpy(),
                    listed["target_index"].to_numpy() + shift)]
    elif args.target:
        batches = ((a, b + shift) for a, b in _every(queries, targets))
    else:
        batches = _all_pairs(queries)
    backend = backends.select(args.backend, executor.device)
    hits = engine.align(backend, scheme, mode, codes, offsets, batches, args.threads,
                        trace=hit_table.traced(columns), min_score=args.min_score,
                        top=args.top)
    hits.target = hits.target - shift
    lengths = np.diff(offsets)
    alphabet = np.array(list(scheme.alphabet))

    def letters(k):
        return "".join(alphabet[codes[offsets[k]:offsets[k + 1]]])

    table = hit_table.Table(hits, query_ids, target_ids, lengths[:queries], lengths[shift:],
                            letters, lambda k: letters(k + shift), WINDOW_OPS)
    hit_table.write(args.output, table, columns)


def register(sub) -> None:
    p = sub.add_parser("align", help="align pairs (local, global, semi-global) with scores "
                       "and coordinates")
    p.add_argument("-q", "--query", required=True, help="query sequences (FASTA)")
    p.add_argument("-t", "--target", help="target sequences (FASTA); without it, all pairs "
                   "of --query")
    pairing = p.add_argument_group("which pairs (default: every query against every target)")
    pairing.add_argument("--one-to-one", action="store_true",
                         help="query record k against target record k")
    pairing.add_argument("--pairs", help="the pairs to align: a TSV with a header naming "
                         "query and target columns (ids)")
    p.add_argument("-o", "--output", required=True, help="the alignments (TSV)")
    p.add_argument("--mode", choices=tuple(MODES), default="local",
                   help="; ".join(f"{m.name}: {m.summary}" for m in MODES.values()) +
                   " (default local)")
    local_scheme_options(p)
    p.add_argument("--columns", default=hit_table.DEFAULT,
                   help=f"output columns, comma-separated, or blast6 (BLAST's outfmt 6); "
                   f"default {hit_table.DEFAULT}; known: {', '.join(hit_table.COLUMNS)}")
    p.add_argument("--min-score", type=int, help="keep alignments scoring at least this")
    p.add_argument("--top", type=integer(1), help="keep the best N targets of each query")
    p.add_argument("--backend", choices=backends.NAMES, default="auto")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.set_defaults(func=run)
