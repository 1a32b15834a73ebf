"""The simulate stage's engine: a small mock community of amplicon reads with known truth.

References form a small tree: the first half are random ACGT sequences of about
--length bases, each later one is a copy of an earlier reference with exactly
round(divergence * length) substitutions, so some OTUs are close. Each sample draws
its reads from the references with a skewed (log-normal) abundance profile; each read
gets substitutions and single-base indels (rates per base) and homopolymer-length
errors (a run of two or more identical bases grows or shrinks by one; rate per run).
A per-read Gamma(0.5, 2) multiplier (mean 1) on those rates makes errors cluster in
some reads, as in real runs, so that about half the reads are exact copies of their
reference and dereplication matters.

Outputs in DIR: references.fasta (`>refK` or `>refK parent=refJ substitutions=N`),
sampleS.fastq.gz (quality 'I' throughout) and truth.tsv (read_id, sample, reference,
n_errors: the number of error events applied to the read). The same seed gives
byte-identical files (gzip with no name and mtime 0).
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserError
from ..formats.atomic import atomic_open

LETTERS = np.frombuffer(b"ACGT", dtype=np.uint8)
# Founder lengths vary by this fraction of --length either way.
LENGTH_SPREAD = 0.02
# Spread (sigma of the log) of the per-sample abundance profile.
PROFILE_SIGMA = 1.5
ERROR_SHAPE = 0.5  # shape of the per-read Gamma error multiplier (mean 1)


@dataclass(frozen=True)
class Params:
    references: int = 8
    length: int = 250
    samples: int = 3
    reads: int = 300
    seed: int = 1
    substitution_rate: float = 0.004
    indel_rate: float = 0.001
    homopolymer_rate: float = 0.01
    divergence: float = 0.05

    def validate(self) -> None:
        for name in ("references", "samples", "reads"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name}: {getattr(self, name)} is below 1")
        if self.length < 20:
            raise UserError(f"--length: {self.length} is below 20")
        for name in ("substitution_rate", "indel_rate", "homopolymer_rate", "divergence"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UserError(f"--{name.replace('_', '-')}: {value} is not between 0 and 1")


@dataclass
class Reference:
    name: str
    seq: np.ndarray  # codes 0-3 for A, C, G, T
    parent: str | None = None
    substitutions: int = 0


@dataclass
class Community:
    references: list[Reference]
    reads: dict[str, list[tuple[str, np.ndarray]]]  # sample -> [(read id, codes)]
    truth: pd.DataFrame  # read_id, sample, reference, n_errors


def text(codes: np.ndarray) -> str:
    return LETTERS[codes].tobytes().decode("ascii")


# ---------------------------------------------------------------- errors


def substitute(rng: np.random.Generator, seq: np.ndarray, rate: float) -> tuple[np.ndarray, int]:
    """Replace each base with probability `rate` by one of the three other bases."""
    hit = rng.random(len(seq)) < rate
    out = seq.copy()
    out[hit] = (out[hit] + rng.integers(1, 4, hit.sum())) % 4
    return out, int(hit.sum())


def indels(rng: np.random.Generator, seq: np.ndarray, rate: float) -> tuple[np.ndarray, int]:
    """At each base with probability `rate`: delete it, or insert a random base after it."""
    pos = np.flatnonzero(rng.random(len(seq)) < rate)
    insert = rng.random(len(pos)) < 0.5
    bases = rng.integers(0, 4, len(pos)).astype(seq.dtype)
    keep = np.ones(len(seq), dtype=bool)
    keep[pos[~insert]] = False
    out = np.insert(seq, pos[insert] + 1, bases[insert])
    keep = np.insert(keep, pos[insert] + 1, True)
    return out[keep], len(pos)


def homopolymer_errors(rng: np.random.Generator, seq: np.ndarray, rate: float) -> tuple[np.ndarray, int]:
    """Grow or shrink each run of two or more identical bases by one, with probability `rate`."""
    starts = np.flatnonzero(np.r_[True, seq[1:] != seq[:-1]])
    lengths = np.diff(np.r_[starts, len(seq)])
    runs = np.flatnonzero(lengths >= 2)
    hit = runs[rng.random(len(runs)) < rate]
    lengths[hit] += rng.choice(np.array([-1, 1]), len(hit))
    return np.repeat(seq[starts], lengths), len(hit)


def sequence_read(rng: np.random.Generator, ref: np.ndarray, params: Params) -> tuple[np.ndarray, int]:
    """One read of `ref` and its number of error events."""
    scale = rng.gamma(ERROR_SHAPE, 1 / ERROR_SHAPE)
    read, n_homopolymer = homopolymer_errors(rng, ref, min(1.0, params.homopolymer_rate * scale))
    read, n_substitution = substitute(rng, read, min(1.0, params.substitution_rate * scale))
    read, n_indel = indels(rng, read, min(1.0, params.indel_rate * scale))
    return read, n_homopolymer + n_substitution + n_indel


# ---------------------------------------------------------------- community


def make_references(rng: np.random.Generator, params: Params) -> list[Reference]:
    spread = int(params.length * LENGTH_SPREAD)
    n_founders = (params.references + 1) // 2
    refs: list[Reference] = []
    for k in range(params.references):
        name = f"ref{k + 1}"
        if k < n_founders:
            length = params.length + int(rng.integers(-spread, spread + 1))
            refs.append(Reference(name, rng.integers(0, 4, length).astype(np.uint8)))
            continue
        parent = refs[int(rng.integers(0, k))]
        n = round(params.divergence * len(parent.seq))
        pos = rng.choice(len(parent.seq), size=n, replace=False)
        seq = parent.seq.copy()
        seq[pos] = (seq[pos] + rng.integers(1, 4, n)) % 4
        refs.append(Reference(name, seq, parent.name, n))
    return refs


def make_community(params: Params) -> Community:
    params.validate()
    rng = np.random.default_rng(params.seed)
    refs = make_references(rng, params)
    reads: dict[str, list[tuple[str, np.ndarray]]] = {}
    truth = []
    for s in range(params.samples):
        sample = f"sample{s + 1}"
        profile = rng.lognormal(0.0, PROFILE_SIGMA, len(refs))
        picks = rng.choice(len(refs), size=params.reads, p=profile / profile.sum())
        reads[sample] = []
        for r, k in enumerate(picks):
            read_id = f"{sample}_{r + 1}"
            seq, n_errors = sequence_read(rng, refs[k].seq, params)
            reads[sample].append((read_id, seq))
            truth.append((read_id, sample, refs[k].name, n_errors))
    columns = ["read_id", "sample", "reference", "n_errors"]
    return Community(refs, reads, pd.DataFrame(truth, columns=columns))


# ---------------------------------------------------------------- output


def write_community(community: Community, out_dir: str | Path) -> None:
    out_dir = Path(out_dir)
    with atomic_open(out_dir / "references.fasta") as out:
        for ref in community.references:
            note = f" parent={ref.parent} substitutions={ref.substitutions}" if ref.parent else ""
            out.write(f">{ref.name}{note}\n{text(ref.seq)}\n")
    for sample, reads in community.reads.items():
        fastq = "".join(f"@{rid}\n{text(seq)}\n+\n{'I' * len(seq)}\n" for rid, seq in reads)
        # No file name and mtime 0 in the gzip header: the same seed gives the same bytes.
        with (
            atomic_open(out_dir / f"{sample}.fastq.gz", "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
        ):
            gz.write(fastq.encode("ascii"))
    with atomic_open(out_dir / "truth.tsv") as out:
        community.truth.to_csv(out, sep="\t", index=False, lineterminator="\n")
