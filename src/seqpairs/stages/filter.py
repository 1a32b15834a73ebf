"""`seqpairs filter`: the pairs whose real alignment reaches an identity threshold
(pairs/filter.py). The candidates come from the distance stage's edge list (--distances,
made under the same --scoring) or are computed here, on --backend: under SeqDist the
pairs whose identity bound reaches the threshold, under an affine scheme (the vsearch
preset) the pairs whose identity does. SeqDist's tracebacks run on the CPU backend, an
affine scheme's on --backend."""
from __future__ import annotations

from .. import backends, scoring
from ..formats.distances import read_edges
from ..formats.fasta import read_unique_fasta
from ..formats.tables import write_tsv
from ..pairs.distance import candidate_edges
from ..pairs.filter import check_edges, filter_affine, filter_affine_edges, filter_edges
from ..pairs.identity import IDDEFS
from .options import fraction, threads


def edge_list(args, seqs):
    """--distances, checked to hold every pair that can pass under --scoring."""
    edges = read_edges(args.distances)
    check_edges(edges, seqs, args.identity, args.iddef, args.distances, args.scoring)
    return edges


def seqdist_table(args, seqs, scheme):
    """Candidates from the edge list (or computed on --backend), traced on the CPU."""
    if args.distances:
        edges = edge_list(args, seqs)
    else:
        edges = candidate_edges(seqs, args.identity, args.iddef, scheme=scheme,
                                backend=backends.select(args.backend), threads=args.threads,
                                prune=args.prune)
    return filter_edges(seqs, edges, args.identity, args.iddef, scheme, backends.select("cpu"),
                        args.threads)


def affine_table(args, seqs, scheme):
    """The pairs of the edge list, or every pair, that reach the threshold, counted and
    traced on --backend (vsearch's allpairs_global)."""
    backend = backends.select(args.backend)
    if args.distances:
        return filter_affine_edges(seqs, edge_list(args, seqs), args.identity, args.iddef,
                                   scheme, backend, args.threads)
    return filter_affine(seqs, scheme, backend, args.identity, args.iddef, args.threads,
                         prune=args.prune)


# The table of each scoring family.
FAMILIES = {"seqdist": seqdist_table, "affine": affine_table}


def run(args) -> None:
    scheme = scoring.get(args.scoring)
    table = FAMILIES[scheme.family]
    seqs = read_unique_fasta(args.input, scheme.alphabet)
    write_tsv(args.output, table(args, seqs, scheme))


def register(sub) -> None:
    p = sub.add_parser("filter", help="pairs whose real alignment reaches an identity threshold")
    p.add_argument("-i", "--input", required=True,
                   help="unique sequences (FASTA: ACGT, or the letters of --scoring)")
    p.add_argument("--distances", help="edge list from `seqpairs distance` under the same "
                   "--scoring (default: computed here); it must hold every pair whose "
                   "identity (SeqDist: its bound) reaches --identity")
    p.add_argument("--identity", "--id", type=fraction, required=True,
                   help="keep pairs with identity >= this (a fraction, e.g. 0.97)")
    p.add_argument("--iddef", type=int, choices=IDDEFS, default=2,
                   help="vsearch's identity definition (default 2)")
    p.add_argument("--scoring", choices=scoring.names("filter"), default="seqdist",
                   help="scoring scheme: seqdist (default), or vsearch: vsearch's "
                   "--allpairs_global with its default scoring")
    p.add_argument("--backend", choices=backends.NAMES, default="auto",
                   help="backend that aligns the pairs (SeqDist: without --distances; its "
                   "tracebacks run on the CPU) and traces them (affine schemes) (default "
                   "auto)")
    p.add_argument("--no-prune", dest="prune", action="store_false",
                   help="without --distances: align every pair in full instead of pruning "
                   "the pairs that provably fail --identity (docs/pruning.md; the same "
                   "output, slower)")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.add_argument("-o", "--output", required=True, help="kept pairs (TSV)")
    p.set_defaults(func=run)
