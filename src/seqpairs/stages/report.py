"""`seqpairs report`: one dataset's figures and summary.tsv (and .html, what the report
shows) for Snakemake's HTML report (report/summary.py); the workflow's times.tsv adds the
time of every rule."""
from __future__ import annotations

from ..errors import UserError
from ..report.summary import Inputs, report
from ..scoring.alphabet import ALPHABETS
from .options import alphabet_option, path_not_stdio


def run(args) -> None:
    if bool(args.edges) != bool(args.distance_log):
        raise UserError("--edges and --distance-log go together: the edge list and the logs "
                        "of the jobs that made it (neither: no distance stage ran)")
    inputs = Inputs(args.ingest_report, args.unique, args.bins, args.tiles, args.edges,
                    args.kept, args.membership, args.psse, args.otu_table, args.times,
                    tuple(args.distance_log), args.qc_funnel, ALPHABETS[args.alphabet])
    report(args.dataset, inputs, args.output)


def register(sub) -> None:
    p = sub.add_parser("report", help="plots and run summary of one dataset (Snakemake report)")
    p.add_argument("--dataset", required=True, help="dataset name (plot titles)")
    p.add_argument("--ingest-report", required=True, metavar="TSV", help="ingest's report.tsv")
    p.add_argument("--unique", required=True, metavar="FASTA", help="ingest's unique.fasta")
    alphabet_option(p)
    p.add_argument("--bins", required=True, metavar="TSV", help="binning's bins.tsv")
    p.add_argument("--tiles", required=True, metavar="TSV", help="binning's tiles.tsv")
    p.add_argument("--edges", metavar="NPZ", help="distance's edges.npz (without it: no "
                   "distance stage ran, the filter aligned every pair, as its vsearch preset)")
    p.add_argument("--kept", required=True, metavar="TSV", help="filter's kept.tsv")
    p.add_argument("--psse", metavar="TSV", help="psse's psse.tsv (adds `significant`)")
    p.add_argument("--membership", required=True, metavar="TSV",
                   help="cluster's PREFIX.membership.tsv")
    p.add_argument("--otu-table", metavar="TSV",
                   help="cluster's PREFIX.otu_table.tsv (checked against the membership)")
    p.add_argument("--times", metavar="TSV",
                   help="seconds per rule (columns rule, seconds, edge_list: the rules that "
                   "made the edge list), as the workflow collates them from its benchmark "
                   "files: adds the distance time, GCUPS and time per rule to the summary")
    p.add_argument("--distance-log", action="append", default=[], metavar="LOG",
                   help="the log of a job that computed the edge list (each shard's, once "
                   "each): the summary's backend and GPUs are those its processes logged")
    p.add_argument("--qc-funnel", metavar="TSV",
                   help="the read QC's funnel.tsv (step, reads, uniques): a summary row per step")
    p.add_argument("-o", "--output", required=True, metavar="DIR", type=path_not_stdio,
                   help="output folder")
    p.set_defaults(func=run)
