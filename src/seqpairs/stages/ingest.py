"""`seqpairs ingest`: samples -> unique.fasta, abundance.tsv, report.tsv (reads/ingest.py)."""
from __future__ import annotations

from ..errors import UserError
from ..formats.samples import STDIN, sample_name
from ..reads.ingest import LETTERS, ingest, log_report, write_outputs
from .options import positive_int


def parse_input(spec: str) -> tuple[str, str]:
    """'NAME=FILE' -> (NAME, FILE); 'FILE' -> (sample_name(FILE), FILE); FILE '-' is
    standard input, which has no file name to name the sample: 'NAME=-'."""
    name, sep, path = spec.partition("=")
    if not sep:
        if spec == STDIN:
            raise UserError(f"-i {STDIN}: name the sample read from standard input: -i NAME={STDIN}")
        return sample_name(spec), spec
    if not name or not path:
        raise UserError(f"-i {spec}: expected FILE or SAMPLE=FILE")
    return name, path


def parse_inputs(specs: list[str]) -> list[tuple[str, str]]:
    """The (sample, file) of every -i; standard input at most once."""
    inputs = [parse_input(spec) for spec in specs]
    if sum(path == STDIN for _, path in inputs) > 1:
        raise UserError(f"-i NAME={STDIN} more than once: standard input is read once, for one sample")
    return inputs


def run(args) -> None:
    result = ingest(
        parse_inputs(args.input),
        ambiguous=args.ambiguous,
        min_length=args.min_length,
        max_length=args.max_length,
        truncate=args.truncate,
        alphabet=args.alphabet,
    )
    write_outputs(result, args.output, args.abundance, args.report)
    log_report(result)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "ingest",
        help="read, normalise, filter and dereplicate samples",
        description="Read FASTA/FASTQ samples (plain or gzip), normalise (upper case, U->T), "
        "filter and dereplicate them across samples.",
    )
    p.add_argument("-i", "--input", action="append", required=True, metavar="[SAMPLE=]FILE",
                   help="a sample file, pipe or FIFO, or SAMPLE=- for standard input (once); "
                   "the sample name defaults to the file name without "
                   ".gz/.fastq/.fq/.fasta/.fa/.fna (repeat for each sample)")
    p.add_argument("-o", "--output", required=True, metavar="FASTA",
                   help="unique sequences, >ID;size=N, by decreasing abundance")
    p.add_argument("--abundance", required=True, metavar="TSV",
                   help="abundance table: id, one column per sample, total")
    p.add_argument("--report", required=True, metavar="TSV",
                   help="per-sample accounting of every record")
    p.add_argument("--alphabet", choices=tuple(LETTERS), default="dna",
                   help="what the reads are: dna (ACGT, U read as T; default) or protein "
                   "(the 20 amino acids and B, Z, X)")
    p.add_argument("--ambiguous", choices=("drop", "error"), default="drop",
                   help="reads with IUPAC ambiguity codes (N, R, Y, ...): drop and count them, "
                   "or stop with an error (default: drop); other non-nucleotide characters "
                   "are always an error")
    p.add_argument("--min-length", type=positive_int, default=1, metavar="N",
                   help="drop reads shorter than N (default: 1)")
    p.add_argument("--max-length", type=positive_int, default=None, metavar="N",
                   help="drop reads longer than N (default: no limit)")
    p.add_argument("--truncate", type=positive_int, default=None, metavar="N",
                   help="cut reads to N bases and drop shorter ones, as AmpliconNoise's "
                   "Truncate (default: off)")
    p.set_defaults(func=run)
