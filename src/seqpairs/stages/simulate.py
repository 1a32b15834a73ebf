"""`seqpairs simulate`: a mock community with known truth (reads/simulate.py)."""
from __future__ import annotations

from ..reads.simulate import LENGTH_SPREAD, Params, make_community, write_community
from .options import (
    MAX_READS,
    MAX_REFERENCE_LENGTH,
    MAX_REFERENCES,
    MAX_SAMPLES,
    fraction,
    integer,
    non_negative_int,
)


def run(args) -> None:
    params = Params(
        references=args.references,
        length=args.length,
        samples=args.samples,
        reads=args.reads,
        seed=args.seed,
        substitution_rate=args.substitution_rate,
        indel_rate=args.indel_rate,
        homopolymer_rate=args.homopolymer_rate,
        divergence=args.divergence,
    )
    write_community(make_community(params), args.output)


def register(subparsers) -> None:
    d = Params()
    p = subparsers.add_parser(
        "simulate",
        help="write a small mock community with known truth",
        description="Simulate reference sequences, samples of reads with sequencing errors "
        "(FASTQ.gz) and a truth table.",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder for references.fasta, sampleN.fastq.gz and truth.tsv")
    p.add_argument("--references", type=integer(1, MAX_REFERENCES), default=d.references,
                   metavar="K",
                   help=f"number of reference sequences, at most {MAX_REFERENCES:,} "
                   f"(default: {d.references})")
    p.add_argument("--length", type=integer(20, MAX_REFERENCE_LENGTH), default=d.length,
                   metavar="L",
                   help=f"reference length; founder lengths vary by up to {LENGTH_SPREAD:.0%}% "
                   f"either way; at most {MAX_REFERENCE_LENGTH} (default: {d.length})")
    p.add_argument("--samples", type=integer(1, MAX_SAMPLES), default=d.samples, metavar="S",
                   help=f"number of samples, at most {MAX_SAMPLES:,} (default: {d.samples})")
    p.add_argument("--reads", type=integer(1, MAX_READS), default=d.reads, metavar="R",
                   help=f"reads per sample, at most {MAX_READS:,} (default: {d.reads})")
    p.add_argument("--seed", type=non_negative_int, default=d.seed,
                   help=f"random seed (default: {d.seed})")
    p.add_argument("--substitution-rate", type=fraction, default=d.substitution_rate, metavar="P",
                   help=f"substitutions per base (default: {d.substitution_rate})")
    p.add_argument("--indel-rate", type=fraction, default=d.indel_rate, metavar="P",
                   help=f"single-base insertions or deletions per base (default: {d.indel_rate})")
    p.add_argument("--homopolymer-rate", type=fraction, default=d.homopolymer_rate, metavar="P",
                   help=f"length errors per homopolymer run of 2+ bases (default: {d.homopolymer_rate})")
    p.add_argument("--divergence", type=fraction, default=d.divergence, metavar="D",
                   help=f"fraction of bases substituted in a reference copied from another "
                   f"(default: {d.divergence})")
    p.set_defaults(func=run)
