"""`seqpairs cluster`: sequences into OTUs by one of the clustering methods (cluster/) on
the identity distance of the filter's kept pairs (--pairs, at --id) or on SeqDist's
distance (-i, at --cutoff); then membership, OTU table and centroids."""
from __future__ import annotations

import argparse
import logging

from ..cluster import DEFAULT_CUTOFF, DEFAULT_IDENTITY, DEFAULT_LINKAGE, METHODS, Request
from ..cluster import run as cluster
from ..cluster.inputs import read_abundance
from ..errors import UserError
from ..formats.fasta import read_unique_fasta
from ..scoring.alphabet import ALPHABETS
from .options import MIN_RESOLUTION, alphabet_option, fraction, number, path_not_stdio

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
    for option in ("psse", "weighted"):
        if getattr(args, option) not in (None, False) and option not in method.options:
            takes = [name for name, m in METHODS.items() if option in m.options]
            raise UserError(f"--{option} is for --linkage {' or '.join(takes)} only")
    if (args.pairs is None) == (args.input is None):
        raise UserError(f"--linkage {args.linkage}: give --pairs (the filter's kept pairs: "
                        "identity distance) or -i (SeqDist distances), one of them")
    distance = "identity" if args.pairs is not None else "seqdist"
    if distance not in method.reads:
        other = "-i (SeqDist distances)" if distance == "identity" else "--pairs (kept pairs)"
        raise UserError(f"--linkage {args.linkage} clusters on {' or '.join(method.reads)} "
                        f"distances only: give {other}")
    if distance == "identity" and args.fasta is None and args.abundance is None:
        raise UserError(f"--linkage {args.linkage} with --pairs needs --fasta or --abundance "
                        "(the sequences and their order)")
    if args.weighted and args.fasta is None and args.abundance is None:
        raise UserError("--weighted needs abundances: --abundance or --fasta with ;size=")


def run(args) -> None:
    check_options(args)
    log.info(cluster(Request(
        linkage=args.linkage, prefix=args.output,
        fasta=read_unique_fasta(args.fasta, ALPHABETS[args.alphabet]) if args.fasta else None,
        fasta_path=args.fasta,
        abundance=read_abundance(args.abundance) if args.abundance else None,
        abundance_path=args.abundance, distances=args.input, distance_format=args.format,
        resolution=args.resolution, cutoff=args.cutoff, weighted=args.weighted,
        pairs=args.pairs, psse=args.psse, identity=args.identity, relabel=args.relabel,
        sizeout=args.sizeout)))


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "cluster",
        help="cluster sequences into OTUs (greedy, OptiClust, complete/average linkage)",
        description="Sequences into OTUs on the identity distance of the filter's kept pairs "
        "(--pairs, at --id: greedy abundance-ordered centroids as vsearch --cluster_size, "
        "OptiClust as mothur, complete linkage) or on SeqDist's distance (-i, at --cutoff: "
        "AmpliconNoise FCluster's complete and average linkage exactly, with PREFIX.list, "
        ".otu, .tree; OptiClust); then membership, OTU tables (TSV, BIOM, mothur .shared), "
        "centroids and .uc.",
    )
    p.add_argument("-i", "--input", metavar="DIST",
                   help="SeqDist distances: SeqDist text or edge list .npz (complete, average, "
                   "opti)")
    p.add_argument("--format", choices=("auto", "seqdist", "edges"), default="auto",
                   help="format of -i (default: edges for .npz, else seqdist)")
    p.add_argument("--linkage", choices=tuple(METHODS), default=DEFAULT_LINKAGE,
                   help="greedy (vsearch --cluster_size), opti (OptiClust, mothur's default), "
                   "complete (FCluster default) or average (FCluster -a; SeqDist only) "
                   f"(default: {DEFAULT_LINKAGE})")
    p.add_argument("--weighted", action="store_true",
                   help="average linkage weighted by abundance (FCluster -w)")
    p.add_argument("--resolution", type=number(MIN_RESOLUTION), default=0.01,
                   help=f"step between .list thresholds, at least {MIN_RESOLUTION:g} (FCluster -r, "
                   "default: 0.01)")
    p.add_argument("--cutoff", type=number(0.0), default=DEFAULT_CUTOFF,
                   help="SeqDist distance (-i): OTUs at this distance, on SeqDist's scale (a "
                   "cost per alignment column, about 0.045 per substitution in 250 bp: "
                   f"{DEFAULT_CUTOFF:g} makes OTUs like 97%% identity; docs/clustering.md) "
                   f"(default: {DEFAULT_CUTOFF:g})")
    p.add_argument("--identity", "--id", type=fraction, default=DEFAULT_IDENTITY,
                   help="identity distance (--pairs): OTUs at identity >= this fraction, the "
                   f"pairs' identity as the filter computed it (default: {DEFAULT_IDENTITY:g})")
    p.add_argument("--pairs", metavar="TSV",
                   help="the filter's kept pairs (columns query, target, id): cluster on the "
                   "identity distance (greedy, opti, complete)")
    p.add_argument("--psse", metavar="TSV",
                   help="greedy: seqpairs psse's table of the --pairs (same pairs, same order); "
                   "only the pairs it marks significant count")
    p.add_argument("--fasta", metavar="FASTA", help="unique sequences (>ID;size=N), for centroids")
    alphabet_option(p)
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
