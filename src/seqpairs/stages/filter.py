"""`seqpairs filter`: the pairs whose real alignment reaches an identity threshold
(pairs/filter.py). Under SeqDist scoring the candidates come from the distance stage's
edge list (--distances) or are computed here; under an affine scheme (the vsearch preset)
every pair is aligned here, on --backend. Tracebacks run on the CPU backend."""
from __future__ import annotations

from .. import backends, scoring
from ..errors import UserError
from ..formats.distances import read_edges
from ..formats.fasta import read_unique_fasta
from ..formats.tables import write_tsv
from ..pairs.distance import candidate_edges
from ..pairs.filter import check_edges, filter_affine, filter_edges
from ..pairs.identity import IDDEFS
from .options import fraction, threads


def seqdist_table(args, seqs, scheme, cpu):
    """Candidates from the edge list (or computed on --backend), traced on the CPU."""
    if args.distances:
        edges = read_edges(args.distances)
        check_edges(edges, seqs, args.identity, args.iddef, args.distances)
    else:
        edges = candidate_edges(seqs, args.identity, args.iddef, scheme=scheme,
                                backend=backends.select(args.backend), threads=args.threads,
                                prune=args.prune)
    return filter_edges(seqs, edges, args.identity, args.iddef, scheme, cpu, args.threads)


def affine_table(args, seqs, scheme, cpu):
    """Every pair aligned on --backend, the kept ones traced on the CPU (vsearch's
    allpairs_global)."""
    return filter_affine(seqs, scheme, backends.select(args.backend), cpu, args.identity,
                         args.iddef, args.threads)


def check_affine(args) -> None:
    if args.distances:
        raise UserError(f"{args.distances}: an edge list holds the candidates of SeqDist "
                        f"scoring; --scoring {args.scoring} aligns every pair itself, so "
                        "leave out --distances")


# By scoring family: the checks of the options (before any input is read) and the table.
FAMILIES = {"seqdist": (lambda args: None, seqdist_table), "affine": (check_affine, affine_table)}


def run(args) -> None:
    scheme = scoring.get(args.scoring)
    check, table = FAMILIES[scheme.family]
    check(args)
    seqs = read_unique_fasta(args.input)
    write_tsv(args.output, table(args, seqs, scheme, backends.select("cpu")))


def register(sub) -> None:
    p = sub.add_parser("filter", help="pairs whose real alignment reaches an identity threshold")
    p.add_argument("-i", "--input", required=True, help="unique sequences (FASTA, ACGT)")
    p.add_argument("--distances", help="edge list from `seqpairs distance` (default: computed "
                   "here); it must hold every pair whose bound reaches --identity")
    p.add_argument("--identity", "--id", type=fraction, required=True,
                   help="keep pairs with identity >= this (a fraction, e.g. 0.97)")
    p.add_argument("--iddef", type=int, choices=IDDEFS, default=2,
                   help="vsearch's identity definition (default 2)")
    p.add_argument("--scoring", choices=scoring.names("filter"), default="seqdist",
                   help="scoring scheme: seqdist (default), or vsearch: vsearch's "
                   "--allpairs_global with its default scoring, every pair aligned (no "
                   "--distances)")
    p.add_argument("--backend", choices=backends.NAMES, default="auto",
                   help="backend that aligns the pairs before their tracebacks (without "
                   "--distances; default auto)")
    p.add_argument("--no-prune", dest="prune", action="store_false",
                   help="without --distances: align every pair in full instead of pruning "
                   "the pairs that provably fail --identity (docs/pruning.md; the same "
                   "output, slower)")
    p.add_argument("--threads", type=threads, default=None,
                   help="CPU threads (default: all cores; at most NUMBA_NUM_THREADS)")
    p.add_argument("-o", "--output", required=True, help="kept pairs (TSV)")
    p.set_defaults(func=run)
