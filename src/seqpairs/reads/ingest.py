"""The ingest stage's engine: read samples (FASTA/FASTQ, plain or gzip: formats/samples.py),
normalise, filter, dereplicate.

Outputs (see `write_outputs`):

- unique.fasta: `>ID;size=TOTAL` and the sequence on one line, by decreasing total
  abundance, ties in order of first appearance. ID is the id of the first record
  (file order, then record order) that had the sequence.
- abundance.tsv: `id`, one column per sample, `total`; same rows and order.
- report.tsv: one row per sample and a final `all` row that accounts for every record:
  records == kept + dropped_ambiguous + dropped_too_short + dropped_too_long and
  kept == unique + duplicate, where `unique` counts the sequences first seen in that
  sample (their ID comes from it) and `duplicate` the kept records merged into an
  earlier identical sequence. `abundance` and `abundance_kept` are the same counts
  weighted by each record's `;size=N` (1 without one). `lowercase`, `rna` and
  `degapped` count the records that `normalise` changed (a record can be in several).

What is normalised, dropped or refused (tests/data/bad/OUTCOMES.tsv lists a file for each):
lower case is upper-cased, U becomes T, alignment gaps ('-', '.') are removed and line
ends may be LF or CRLF; IUPAC ambiguity codes are dropped (or refused, --ambiguous
error); any other character (protein letters, digits, '*') is refused, naming file,
record and position.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd

from ..errors import UserError
from ..formats.atomic import atomic_open
from ..formats.samples import read_records, record_id

# Names that would collide with the report's total row or abundance.tsv's columns.
RESERVED_SAMPLES = ("all", "id", "total")
IUPAC_AMBIGUOUS = "NRYSWKMBDHV"
_NON_ACGT = re.compile("[^ACGT]")
_NOT_NUCLEOTIDE = re.compile(f"[^ACGT{IUPAC_AMBIGUOUS}]")
# Records changed by `normalise`, counted per kind in the report.
NORMALISATIONS = ("lowercase", "rna", "degapped")


@dataclass(frozen=True)
class Policy:
    ambiguous: str = "drop"  # "drop" or "error"
    min_length: int = 1
    max_length: int | None = None
    truncate: int | None = None

    def validate(self) -> None:
        if self.ambiguous not in ("drop", "error"):
            raise UserError(f"--ambiguous: {self.ambiguous!r} is not 'drop' or 'error'")
        if self.min_length < 1:
            raise UserError(f"--min-length: {self.min_length} is below 1")
        if self.max_length is not None and self.max_length < self.min_length:
            raise UserError(f"--max-length: {self.max_length} is below --min-length {self.min_length}")
        if self.truncate is not None and self.truncate < 1:
            raise UserError(f"--truncate: {self.truncate} is below 1")


@dataclass
class SampleReport:
    sample: str
    file: str
    records: int = 0
    kept: int = 0
    unique: int = 0
    duplicate: int = 0
    dropped_ambiguous: int = 0
    dropped_too_short: int = 0
    dropped_too_long: int = 0
    abundance: int = 0
    abundance_kept: int = 0
    lowercase: int = 0
    rna: int = 0
    degapped: int = 0


@dataclass
class IngestResult:
    samples: list[str]
    seqs: list[str]  # unique sequences, in output order
    abundance: pd.DataFrame  # index `id` (output order); one column per sample, then `total`
    report: pd.DataFrame  # one row per sample, then `all`

    @property
    def ids(self) -> list[str]:
        return list(self.abundance.index)


# ---------------------------------------------------------------- filtering


def normalise(raw: str) -> tuple[str, list[str]]:
    """Upper case, U -> T, alignment gaps removed: (sequence, NORMALISATIONS applied)."""
    seq = raw.upper()
    applied = {
        "lowercase": seq != raw,
        "rna": "U" in seq,
        "degapped": "-" in seq or "." in seq,
    }
    seq = seq.replace("U", "T").replace("-", "").replace(".", "")
    return seq, [name for name in NORMALISATIONS if applied[name]]


def check(seq: str, policy: Policy, where: str) -> tuple[str, str | None]:
    """Apply the policies to a normalised sequence: (sequence, None) or (_, drop reason)."""
    invalid = _NOT_NUCLEOTIDE.search(seq)
    if invalid:
        char = invalid.group()
        hint = " (protein in a DNA dataset?)" if char.isalpha() else ""
        raise UserError(f"{where}: {char!r} at position {invalid.start() + 1} is not a "
                        f"nucleotide code{hint}")
    bad = _NON_ACGT.search(seq)
    if bad:
        if policy.ambiguous == "error":
            raise UserError(
                f"{where}: letter {bad.group()!r} at position {bad.start() + 1} is not A, C, G or T"
            )
        return seq, "ambiguous"
    if policy.truncate is not None:
        # As AmpliconNoise's Truncate: longer reads are cut, shorter ones dropped.
        if len(seq) < policy.truncate:
            return seq, "too_short"
        seq = seq[: policy.truncate]
    if len(seq) < policy.min_length:
        return seq, "too_short"
    if policy.max_length is not None and len(seq) > policy.max_length:
        return seq, "too_long"
    return seq, None


# ---------------------------------------------------------------- dereplication


class _Uniques:
    """Unique sequences in order of first appearance, with per-sample abundance."""

    def __init__(self, n_samples: int):
        self.n_samples = n_samples
        self.index: dict[str, int] = {}  # sequence -> position
        self.owner: dict[str, str] = {}  # id -> file that introduced it
        self.ids: list[str] = []
        self.seqs: list[str] = []
        self.counts: list[list[int]] = []

    def add(self, seq: str, rid: str, size: int, sample: int, path: str) -> bool:
        """Count `size` reads of `seq` in `sample`; True when the sequence is new."""
        k = self.index.get(seq)
        if k is not None:
            self.counts[k][sample] += size
            return False
        if rid in self.owner:
            raise UserError(
                f"{path}:{rid}: id already names a different sequence (from {self.owner[rid]}); "
                "ids must be unique across inputs"
            )
        self.index[seq] = len(self.seqs)
        self.owner[rid] = path
        self.ids.append(rid)
        self.seqs.append(seq)
        self.counts.append([0] * self.n_samples)
        self.counts[-1][sample] = size
        return True


def _ingest_sample(row: SampleReport, sample: int, uniques: _Uniques, policy: Policy) -> None:
    for number, title, raw in read_records(row.file):
        rid, size = record_id(row.file, number, title)
        row.records += 1
        row.abundance += size
        seq, applied = normalise(raw)
        for name in applied:
            setattr(row, name, getattr(row, name) + 1)
        seq, reason = check(seq, policy, f"{row.file}:{rid}")
        if reason is not None:
            setattr(row, f"dropped_{reason}", getattr(row, f"dropped_{reason}") + 1)
            continue
        row.kept += 1
        row.abundance_kept += size
        if uniques.add(seq, rid, size, sample, row.file):
            row.unique += 1
        else:
            row.duplicate += 1


def _total_row(rows: list[SampleReport]) -> SampleReport:
    total = SampleReport(sample="all", file="")
    for f in fields(SampleReport):
        if f.name not in ("sample", "file"):
            setattr(total, f.name, sum(getattr(r, f.name) for r in rows))
    return total


def ingest(
    inputs: list[tuple[str, str]],
    *,
    ambiguous: str = "drop",
    min_length: int = 1,
    max_length: int | None = None,
    truncate: int | None = None,
) -> IngestResult:
    """Read (sample, file) pairs in order and dereplicate all kept reads together."""
    policy = Policy(ambiguous, min_length, max_length, truncate)
    policy.validate()
    if not inputs:
        raise UserError("no input files")
    names = [name for name, _ in inputs]
    for name, path in inputs:
        if name in RESERVED_SAMPLES:
            raise UserError(f"{path}: sample name {name!r} is reserved; name it with -i NAME={path}")
        if names.count(name) > 1:
            raise UserError(f"{path}: sample name {name!r} is used by more than one input")

    uniques = _Uniques(len(inputs))
    rows = [SampleReport(sample=name, file=path) for name, path in inputs]
    for k, row in enumerate(rows):
        _ingest_sample(row, k, uniques, policy)
    total = _total_row(rows)
    if total.kept == 0:
        raise UserError(
            f"no sequences left: all {total.records} records were dropped (ambiguous "
            f"{total.dropped_ambiguous}, too short {total.dropped_too_short}, "
            f"too long {total.dropped_too_long})"
        )

    abundance = pd.DataFrame(uniques.counts, index=pd.Index(uniques.ids, name="id"), columns=names)
    abundance["total"] = abundance.sum(axis=1)
    # A stable sort keeps first-appearance order among equal totals.
    order = np.argsort(-abundance["total"].to_numpy(), kind="stable")
    report = pd.DataFrame([asdict(r) for r in [*rows, total]])
    return IngestResult(
        samples=names,
        seqs=[uniques.seqs[k] for k in order],
        abundance=abundance.iloc[order],
        report=report,
    )


# ---------------------------------------------------------------- output


def write_outputs(result: IngestResult, fasta: str, abundance: str, report: str) -> None:
    with atomic_open(fasta) as out:
        for rid, total, seq in zip(result.ids, result.abundance["total"], result.seqs):
            out.write(f">{rid};size={total}\n{seq}\n")
    with atomic_open(abundance) as out:
        result.abundance.to_csv(out, sep="\t", lineterminator="\n")
    with atomic_open(report) as out:
        result.report.to_csv(out, sep="\t", index=False, lineterminator="\n")
