"""`seqpairs cluster`: sequences into OTUs by one of the clustering methods (cluster/):
FCluster's complete or average linkage of distances, or greedy centroid clustering of the
filter's kept pairs; then membership, OTU table and centroids."""
from __future__ import annotations

import argparse
import logging

from ..cluster import METHODS, Request
from ..cluster import run as cluster
from ..cluster.inputs import read_abundance
from ..errors import UserError
from ..formats.fasta import read_unique_fasta
from .options import MIN_RESOLUTION, fraction, number, path_not_stdio

OTU_ID_FORBIDDEN = " \t\n\r;,"  # blanks end a FASTA id; ';' and ',' split ids in .list/;size=


def otu_prefix(text: str) -> str:
    """--relabel: a prefix that keeps every OTU id one FASTA word and one table field."""
    bad = next((c for c in text if c in OTU_ID_FORBIDDEN), None)
    if not text or bad is not None:
        raise argparse.ArgumentTypeError(
            f"must be a non-empty prefix without blanks, ';' or ',', not {text!r}")
    return text

log = logging.getLogger("seqpairs.cluster")


def check_options(args) -> None:
    method = METHODS[args.linkage]
    for option in ("pairs", "psse", "weighted"):
        if getattr(args, option) not in (None, False) and option not in method.options:
            takes = [name for name, m in METHODS.items() if option in m.options]
            raise UserError(f"--{option} is for --linkage {' or '.join(takes)} only")
    if method.reads == "pairs":
        if args.pairs is None:
            raise UserError(f"--linkage {args.linkage} needs --pairs (the filter's kept pairs)")
        if args.fasta is None and args.abundance is None:
            raise UserError(f"--linkage {args.linkage} needs --fasta or --abundance (the "
                            "sequences and their order)")
    elif args.input is None:
        raise UserError(f"--linkage {args.linkage} needs -i (distances)")
    if args.weighted and args.fasta is None and args.abundance is None:
        raise UserError("--weighted needs abundances: --abundance or --fasta with ;size=")


def run(args) -> None:
    check_options(args)
    log.info(cluster(Request(
        linkage=args.linkage, prefix=args.output,
        fasta=read_unique_fasta(args.fasta) if args.fasta else None, fasta_path=args.fasta,
        abundance=read_abundance(args.abundance) if args.abundance else None,
        abundance_path=args.abundance, distances=args.input, distance_format=args.format,
        resolution=args.resolution, cutoff=args.cutoff, weighted=args.weighted,
        pairs=args.pairs, psse=args.psse, identity=args.identity, relabel=args.relabel,
        sizeout=args.sizeout)))


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cluster",
        help="cluster sequences into OTUs (FCluster complete/average linkage, or greedy)",
        description="Hierarchical clustering exactly as AmpliconNoise's FCluster (PREFIX.list, "
        ".otu, .tree) or greedy abundance-ordered centroid clustering; then membership, "
        "OTU table and centroids.",
    )
    p.add_argument("-i", "--input", metavar="DIST",
                   help="distances: SeqDist text or edge list .npz (complete/average linkage; "
                   "greedy does not read it)")
    p.add_argument("--format", choices=("auto", "seqdist", "edges"), default="auto",
                   help="format of -i (default: edges for .npz, else seqdist)")
    p.add_argument("--linkage", choices=tuple(METHODS), default="complete",
                   help="complete (FCluster default), average (FCluster -a) or greedy (default: complete)")
    p.add_argument("--weighted", action="store_true",
                   help="average linkage weighted by abundance (FCluster -w)")
    p.add_argument("--resolution", type=number(MIN_RESOLUTION), default=0.01,
                   help=f"step between .list thresholds, at least {MIN_RESOLUTION:g} (FCluster -r, "
                   "default: 0.01)")
    p.add_argument("--cutoff", type=number(0.0), default=0.03,
                   help="hierarchical: clusters from merges below this distance (default: 0.03)")
    p.add_argument("--identity", "--id", type=fraction, default=0.97,
                   help="greedy: join a centroid at identity >= this fraction (default: 0.97)")
    p.add_argument("--pairs", metavar="TSV",
                   help="greedy: the filter's kept pairs (columns query, target, id)")
    p.add_argument("--psse", metavar="TSV",
                   help="greedy: seqpairs psse's table of the --pairs (same pairs, same order); "
                   "only the pairs it marks significant count")
    p.add_argument("--fasta", metavar="FASTA", help="unique sequences (>ID;size=N), for centroids")
    p.add_argument("--abundance", metavar="TSV",
                   help="abundance table (id, samples..., total), for the OTU table")
    p.add_argument("--relabel", metavar="PREFIX", type=otu_prefix,
                   help="name the OTUs PREFIX1, PREFIX2, ... (vsearch's --relabel) in every "
                   "table and the centroids FASTA (default: the centroid's id)")
    p.add_argument("--sizeout", action="store_true",
                   help="write ;size=N (the OTU's reads) in the centroids FASTA's headers "
                   "(vsearch's --sizeout; the tables then name OTUs without it)")
    p.add_argument("-o", "--output", required=True, metavar="PREFIX", type=path_not_stdio,
                   help="output prefix")
    p.set_defaults(func=run)
