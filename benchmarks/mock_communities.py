"""Mock amplicon communities with known truth for the OTU benchmark (bench_otus.py),
independent of `seqpairs simulate`: several samples of reads of taxa that differ pairwise
by every divergence from --min to --max, as gzipped FASTQ with qualities that mark the
sequencing errors, and the truth of every read.

    python benchmarks/mock_communities.py -o DIR [--taxa 70] [--samples 3] [--reads 1500]
        [--length 250] [--min 0.02] [--max 0.2] [--sigma 1.5] [--platform illumina|454]
        [--substitution-rate R] [--homopolymer-rate R] [--indel-rate R]
        [--quality calibrated|simple] [--seed 1]

    from mock_communities import make_mock
    summary = make_mock("DIR", taxa=70, samples=3, reads=1500, seed=1)

Taxa: communities.py's binary tree (`taxa`): a random root of --length bases, branches
substituting (and, at 1/20 of the rate, indelling) so that two taxa split at the root
differ by about --max and sisters by about --min; the first --taxa leaves are kept.

Samples: each sample draws --reads reads from the taxa with its own log-normal abundance
profile (sigma --sigma of the log, independent per taxon and sample), so a taxon can be
dominant in one sample and rare or absent in another.

Reads: errors as `seqpairs simulate` applies them (reads/simulate.py's helpers
homopolymer_errors, substitute, indels, in that order, each read's rates scaled by a
Gamma(0.5, 2) multiplier of mean 1, so that errors cluster in some reads and many reads
are exact), at per-platform rates:

    platform   substitution/base   homopolymer/run (+-1 base)   indel/base
    illumina   0.002               0.002                         0.0001
    454        0.001               0.03                          0.0005

(--*-rate override them). Every error's position is tracked. Qualities (--quality):
- calibrated (default): the correct bases of a read sit at the Phred value of that read's
  own expected error rate per base (the platform's rates times its multiplier, counting
  homopolymer errors per run), clipped to 20..41, so a read that drew a high error rate
  also looks worse and its expected errors (vsearch's EE) are about its real expected
  number of errors: `--fastq_maxee 1` drops mostly error-rich reads;
- simple: Phred 38 on every correct base whatever the read's rate; then an error costs
  only 0.01-0.1 expected errors and --fastq_maxee 1 drops nearly nothing.
Both: normal noise (sd 1.5) and a drop of 4 towards the 3' end on the correct bases, and
Phred 10..20 (uniform, at most the correct level) on the bases an error made (a
substituted or inserted base, the last base of a homopolymer run that grew or shrank,
the base after a deletion).

Outputs in DIR: sampleS.fastq.gz (S = 1..--samples; read ids `sSrK`, unique across
samples; gzip with no name and mtime 0, so the same seed gives the same bytes),
truth.tsv (read_id, sample, taxon, n_errors), taxa.fasta (`>taxonK`, the error-free
sequences).
"""
from __future__ import annotations

import argparse
import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from seqpairs.reads.simulate import ERROR_SHAPE, homopolymer_errors, indels, substitute, text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from communities import taxa as tree_taxa  # noqa: E402

PLATFORMS = {
    "illumina": {"substitution_rate": 0.002, "homopolymer_rate": 0.002, "indel_rate": 0.0001},
    "454": {"substitution_rate": 0.001, "homopolymer_rate": 0.03, "indel_rate": 0.0005},
}
GOOD_Q, GOOD_SD, GOOD_MIN, GOOD_MAX, END_DROP = 38.0, 1.5, 2, 41, 4.0
CALIBRATED_MIN = 20  # lowest per-read level of the correct bases (calibrated model)
QUALITY_MODELS = ("calibrated", "simple")
BAD_Q = (10, 20)  # inclusive range of the erroneous bases' qualities


@dataclass(frozen=True)
class Rates:
    substitution_rate: float
    homopolymer_rate: float
    indel_rate: float


@dataclass
class Mock:
    taxa: list[np.ndarray]
    reads: dict[str, list[tuple[str, str, str]]]  # sample -> [(read id, sequence, quality)]
    truth: pd.DataFrame  # read_id, sample, taxon, n_errors
    rates: Rates = field(default=None)


def run_lengths(seq: np.ndarray) -> np.ndarray:
    starts = np.flatnonzero(np.r_[True, seq[1:] != seq[:-1]])
    return np.diff(np.r_[starts, len(seq)])


def read_with_errors(rng: np.random.Generator, ref: np.ndarray, rates: Rates):
    """One read of `ref`: (codes, bool mask of the bases an error made, number of errors,
    the read's expected errors per base)."""
    scale = rng.gamma(ERROR_SHAPE, 1 / ERROR_SHAPE)
    runs = int((run_lengths(ref) >= 2).sum())
    per_base = scale * (rates.substitution_rate + rates.indel_rate
                        + rates.homopolymer_rate * runs / max(len(ref), 1))
    # Homopolymer runs grow or shrink by one; runs never merge or vanish (a run of 2 or
    # more keeps at least one base), so the run-length encodings line up run for run.
    read, n_h = homopolymer_errors(rng, ref, min(1.0, rates.homopolymer_rate * scale))
    bad = np.zeros(len(read), bool)
    if n_h:
        before, after = run_lengths(ref), run_lengths(read)
        ends = np.cumsum(after) - 1
        bad[ends[before != after]] = True
    # Substitutions keep the length: the changed bases are the errors.
    sub, n_s = substitute(rng, read, min(1.0, rates.substitution_rate * scale))
    bad |= sub != read
    # Indels: each base carries its position (code + 4 * (position + 1)); simulate's
    # `indels` inserts random codes 0..3, so values < 4 are insertions, and a jump in the
    # carried positions is a deletion (the base after it is marked).
    carried = sub.astype(np.int64) + 4 * (np.arange(len(sub), dtype=np.int64) + 1)
    moved, n_i = indels(rng, carried, min(1.0, rates.indel_rate * scale))
    inserted = moved < 4
    origin = np.where(inserted, -1, moved // 4 - 1)
    codes = (moved % 4).astype(np.uint8)
    mask = np.where(inserted, True, bad[np.maximum(origin, 0)])
    if n_i:
        kept = np.flatnonzero(~inserted)
        gap = np.diff(np.r_[-1, origin[kept]]) > 1  # a deletion just before this base
        mask[kept[gap]] = True
    return codes, mask, n_h + n_s + n_i, per_base


def qualities(rng: np.random.Generator, mask: np.ndarray, model: str = "calibrated",
              error_rate: float = 0.0) -> str:
    """Phred+33 qualities of a read whose erroneous bases are `mask`; `error_rate`: the
    read's expected errors per base (its rates times its multiplier), for "calibrated"."""
    n = len(mask)
    pos = np.arange(n) / max(n - 1, 1)
    top = GOOD_Q
    if model == "calibrated":
        top = float(np.clip(-10 * np.log10(max(error_rate, 1e-12)), CALIBRATED_MIN, GOOD_MAX))
    good = np.rint(rng.normal(top - END_DROP * pos**2, GOOD_SD)).clip(GOOD_MIN, GOOD_MAX)
    bad = rng.integers(BAD_Q[0], BAD_Q[1] + 1, n)
    q = np.where(mask, np.minimum(bad, good), good).astype(np.uint8)
    return (q + 33).tobytes().decode("ascii")


def generate(taxa: int = 70, samples: int = 3, reads: int = 1500, length: int = 250,
             smallest: float = 0.02, largest: float = 0.2, sigma: float = 1.5,
             platform: str = "illumina", seed: int = 1, quality: str = "calibrated",
             **rate_overrides) -> Mock:
    """The community in memory; `rate_overrides` (substitution_rate, homopolymer_rate,
    indel_rate) replace the platform's rates where not None; `quality`: QUALITY_MODELS."""
    if quality not in QUALITY_MODELS:
        raise ValueError(f"quality must be one of {', '.join(QUALITY_MODELS)}, not {quality!r}")
    if platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {', '.join(PLATFORMS)}, not {platform!r}")
    rates = dict(PLATFORMS[platform])
    rates.update({k: v for k, v in rate_overrides.items() if v is not None})
    rates = Rates(**rates)
    rng = np.random.default_rng(seed)
    refs = tree_taxa(rng, taxa, length, smallest, largest)
    out: dict[str, list[tuple[str, str, str]]] = {}
    truth = []
    for s in range(1, samples + 1):
        sample = f"sample{s}"
        profile = rng.lognormal(0.0, sigma, len(refs))
        picks = rng.choice(len(refs), size=reads, p=profile / profile.sum())
        out[sample] = []
        for r, k in enumerate(picks, 1):
            codes, mask, n_errors, per_base = read_with_errors(rng, refs[k], rates)
            read_id = f"s{s}r{r}"
            out[sample].append((read_id, text(codes), qualities(rng, mask, quality, per_base)))
            truth.append((read_id, sample, f"taxon{k + 1}", n_errors))
    frame = pd.DataFrame(truth, columns=["read_id", "sample", "taxon", "n_errors"])
    return Mock(refs, out, frame, rates)


def write(mock: Mock, out_dir) -> dict:
    """Write the community's files into out_dir; returns a summary."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "taxa.fasta", "w") as fh:
        for k, seq in enumerate(mock.taxa, 1):
            fh.write(f">taxon{k}\n{text(seq)}\n")
    files = {}
    for sample, reads in mock.reads.items():
        path = out_dir / f"{sample}.fastq.gz"
        body = "".join(f"@{rid}\n{seq}\n+\n{qual}\n" for rid, seq, qual in reads)
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                   mtime=0) as gz:
            gz.write(body.encode("ascii"))
        files[sample] = path
    mock.truth.to_csv(out_dir / "truth.tsv", sep="\t", index=False, lineterminator="\n")
    truth = mock.truth
    return {
        "dir": out_dir, "samples": files, "reads": len(truth),
        "taxa": len(mock.taxa), "taxa_present": truth["taxon"].nunique(),
        "exact_reads": float((truth["n_errors"] == 0).mean()),
        "rates": mock.rates,
    }


def make_mock(out_dir, **kwargs) -> dict:
    """generate(**kwargs) and write it into out_dir; returns write's summary."""
    return write(generate(**kwargs), out_dir)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="output folder")
    parser.add_argument("--taxa", type=int, default=70)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--reads", type=int, default=1500, help="reads per sample")
    parser.add_argument("--length", type=int, default=250, help="amplicon length")
    parser.add_argument("--min", type=float, default=0.02, help="divergence of sister taxa")
    parser.add_argument("--max", type=float, default=0.2, help="divergence across the root")
    parser.add_argument("--sigma", type=float, default=1.5, help="log-normal abundance sigma")
    parser.add_argument("--platform", choices=tuple(PLATFORMS), default="illumina")
    parser.add_argument("--substitution-rate", type=float)
    parser.add_argument("--homopolymer-rate", type=float)
    parser.add_argument("--indel-rate", type=float)
    parser.add_argument("--quality", choices=QUALITY_MODELS, default="calibrated",
                        help="quality model of the correct bases (module docstring)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    summary = make_mock(
        args.output, taxa=args.taxa, samples=args.samples, reads=args.reads,
        length=args.length, smallest=args.min, largest=args.max, sigma=args.sigma,
        platform=args.platform, seed=args.seed, quality=args.quality, substitution_rate=args.substitution_rate,
        homopolymer_rate=args.homopolymer_rate, indel_rate=args.indel_rate)
    print(f"{summary['reads']} reads of {summary['taxa_present']}/{summary['taxa']} taxa in "
          f"{len(summary['samples'])} samples, {summary['exact_reads']:.0%} without errors "
          f"({summary['rates']}) -> {summary['dir']}")


if __name__ == "__main__":
    main()
