"""The argparse types of the stages' numeric options (and of outputs that cannot be
standard output): every number is checked where it
enters, with one error line (cli.main prints argparse's errors as `seqpairs: error:
argument --OPTION: ...`). NaN is never a number here, and infinity only where an option
says so. The bounds that size work or output are in limits.py.
"""
from __future__ import annotations

import argparse
import math
import os

from ..errors import UserError
from ..limits import (  # noqa: F401 (the bounds, for the stages' register())
    MAX_BIN_WIDTH,
    MAX_LIST_LINES,
    MAX_MEMORY,
    MAX_RANK_TIMEOUT,
    MAX_READS,
    MAX_REFERENCE_LENGTH,
    MAX_REFERENCES,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_SHARDS,
    MAX_SHUFFLES,
    MAX_TILE_PAIRS,
    MIN_RESOLUTION,
)


def alphabet_option(parser) -> None:
    """--alphabet: the kind of letters of the FASTA a stage reads (scoring.alphabet.ALPHABETS)."""
    from ..scoring.alphabet import ALPHABETS

    parser.add_argument("--alphabet", choices=tuple(ALPHABETS), default="dna",
                        help="the sequences' letters: dna (ACGT, default) or protein")


def path_not_stdio(text: str) -> str:
    """An argparse type: an output path other than `-`, for binary outputs, folders and
    prefixes of several files (standard output takes single text outputs only)."""
    if text == "-":
        raise argparse.ArgumentTypeError("give a path: standard output takes text outputs "
                                         "only")
    return text


def integer(lo: int, hi: int | None = None):
    """An argparse type: a whole number from lo to hi (no upper bound when hi is None)."""
    span = f">= {lo}" if hi is None else f"from {lo} to {hi}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number {span}, not {text!r}") \
                from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be a whole number {span}, not {text!r}")
        return value

    return parse


positive_int = integer(1)
non_negative_int = integer(0)


def number(lo: float, hi: float = math.inf, infinite: bool = False):
    """An argparse type: a number from lo to hi (hi = inf: no upper bound). Infinity only
    when `infinite` (an option whose "no limit" is inf); NaN never."""
    span = (f">= {lo:g}" if hi == math.inf else f"from {lo:g} to {hi:g}") + \
        (" or inf" if infinite else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {span}, not {text!r}") \
                from None
        if math.isnan(value) or (math.isinf(value) and not infinite) \
                or not lo <= value <= (math.inf if infinite else hi):
            raise argparse.ArgumentTypeError(f"must be a number {span}, not {text!r}")
        return value

    return parse


fraction = number(0.0, 1.0)


def threads(text: str) -> int:
    """CPU threads: a whole number >= 1, lowered to the threads the runtime has (Numba's
    pool, NUMBA_NUM_THREADS: by default the CPUs this process may use), so that Snakemake's
    `--cores` above the machine's CPUs runs."""
    return min(positive_int(text), runtime_threads())


def runtime_threads() -> int:
    """Numba's thread pool size (check_environment has checked NUMBA_NUM_THREADS)."""
    import numba

    return numba.config.NUMBA_NUM_THREADS


def check_environment() -> None:
    """The numbers of the environment that seqpairs' libraries read (a UserError each):
    checked before the options, as Numba reads NUMBA_NUM_THREADS when imported."""
    text = os.environ.get("NUMBA_NUM_THREADS")
    if text is None:
        return
    try:
        valid = int(text) >= 1
    except ValueError:
        valid = False
    if not valid:
        raise UserError(f"NUMBA_NUM_THREADS={text!r}: must be a whole number >= 1 (Numba's "
                        "threads), or unset")


def shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N) with 0 <= K < N <= MAX_SHARDS."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N") from None
    if not 0 <= index < count <= MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= K < N <= {MAX_SHARDS}")
    return index, count



# The registered local schemes whose scores are the defaults, by alphabet (psse, align).
DEFAULT_LOCAL_SCHEME = {"dna": "blastn", "protein": "blastp"}


def local_scheme_options(parser) -> None:
    """--alphabet, --matrix, --match, --mismatch, --gap-open, --gap-extend: the integer
    scores of psse and align (local_scheme builds them)."""
    parser.add_argument("--alphabet", choices=tuple(DEFAULT_LOCAL_SCHEME), default="dna",
                        help="sequence alphabet (default dna)")
    parser.add_argument("--matrix", help="substitution matrix by name (Biopython's, e.g. "
                        "BLOSUM62; default for protein: BLOSUM62)")
    parser.add_argument("--match", type=int, help="DNA match score (default 2)")
    parser.add_argument("--mismatch", type=int, help="DNA mismatch score (default -3)")
    parser.add_argument("--gap-open", type=int, help="a gap of length k costs gap-open + k "
                        "gap-extend (default: dna 5, protein 11)")
    parser.add_argument("--gap-extend", type=int, help="(default: dna 2, protein 1)")


def local_scheme(args):
    """The LocalScheme of the command line: the alphabet's default scheme (BLASTN's,
    BLASTP's) with the options given replacing its values."""
    from dataclasses import replace

    from .. import scoring
    from ..scoring import LocalScheme

    dna = args.alphabet == "dna"
    if args.matrix and (args.match is not None or args.mismatch is not None):
        raise UserError("--matrix and --match/--mismatch exclude each other")
    if not dna and (args.match is not None or args.mismatch is not None):
        raise UserError("--match/--mismatch score DNA; for protein give --matrix")
    default = scoring.get(DEFAULT_LOCAL_SCHEME[args.alphabet])
    gap_open = default.gap_open if args.gap_open is None else args.gap_open
    gap_extend = default.gap_extend if args.gap_extend is None else args.gap_extend
    if args.matrix:
        return LocalScheme.from_matrix(args.matrix, gap_open, gap_extend,
                                       alphabet=args.alphabet)
    if args.match is not None or args.mismatch is not None:
        match = default.subst[0][0] if args.match is None else args.match
        mismatch = default.subst[0][1] if args.mismatch is None else args.mismatch
        return LocalScheme.dna(match, mismatch, gap_open, gap_extend)
    return replace(default, gap_open=gap_open, gap_extend=gap_extend)
