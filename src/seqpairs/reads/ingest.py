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
record and position. With --alphabet protein (LETTERS) a read holds the 20 amino acids
and B, Z, X, which the substitution matrices score (no read is dropped as ambiguous);
U is not changed (selenocysteine, which the matrices do not score, is refused as any
other character, '*' too). A read longer than the longest a kept read may be (--max-length,
else the kernels' limit, backends.common.MAX_LENGTH) is dropped as too long. Reads come
in pieces (formats/samples.py) and are checked piece by piece: at most the letters a kept
read can have are held, so a read of any length costs bounded memory.

Ids are opaque text: the header's first word without its `;size=N` (formats.fasta
.split_size, which refuses two of them); abundances that add up to more than 2^63 - 1
(the tables' int64) are refused.
"""
from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd

from ..backends.common import MAX_LENGTH
from ..errors import UserError
from ..formats.atomic import atomic_open
from ..formats.fasta import INT64_MAX
from ..formats.samples import STDIN, read_records, record_id
from ..scoring.alphabet import ALPHABETS

log = logging.getLogger("seqpairs.ingest")

# Names that would collide with the report's total row or abundance.tsv's columns.
RESERVED_SAMPLES = ("all", "id", "total")
IUPAC_AMBIGUOUS = "NRYSWKMBDHV"


@dataclass(frozen=True)
class Letters:
    """What a read of one kind holds: `kept` letters, `ambiguous` ones (the read is
    dropped, or refused), anything else refused as not a `code`; RNA's U read as T."""

    kept: str
    ambiguous: str
    rna: bool
    code: str  # what a letter is, for the error
    hint: str  # after the error, for a letter of the other kind

    def __post_init__(self):
        object.__setattr__(self, "not_kept", re.compile(f"[^{self.kept}]"))
        object.__setattr__(self, "invalid", re.compile(f"[^{self.kept}{self.ambiguous}]"))


LETTERS = {
    "dna": Letters(ALPHABETS["dna"], IUPAC_AMBIGUOUS, True, "a nucleotide code",
                   " (protein in a DNA dataset? --alphabet protein)"),
    "protein": Letters(ALPHABETS["protein"], "", False, "an amino acid code", ""),
}
# Records changed by `normalise`, counted per kind in the report.
NORMALISATIONS = ("lowercase", "rna", "degapped")


@dataclass(frozen=True)
class Policy:
    ambiguous: str = "drop"  # "drop" or "error"
    min_length: int = 1
    max_length: int | None = None
    truncate: int | None = None
    alphabet: str = "dna"  # a LETTERS key

    def validate(self) -> None:
        if self.alphabet not in LETTERS:
            raise UserError(f"--alphabet: {self.alphabet!r} is not one of {', '.join(LETTERS)}")
        if self.ambiguous not in ("drop", "error"):
            raise UserError(f"--ambiguous: {self.ambiguous!r} is not 'drop' or 'error'")
        if self.min_length < 1:
            raise UserError(f"--min-length: {self.min_length} is below 1")
        if self.max_length is not None and self.max_length < self.min_length:
            raise UserError(f"--max-length: {self.max_length} is below --min-length {self.min_length}")
        if self.truncate is not None and self.truncate < 1:
            raise UserError(f"--truncate: {self.truncate} is below 1")
        for option, value in (("--max-length", self.max_length), ("--truncate", self.truncate)):
            if value is not None and value > MAX_LENGTH:
                raise UserError(f"{option}: {value} is above the kernels' limit of {MAX_LENGTH} "
                                "letters")

    @property
    def longest(self) -> int:
        """The most letters a kept read may have."""
        return MAX_LENGTH if self.max_length is None else self.max_length


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


def normalise(raw: str, rna: bool = True) -> tuple[str, list[str]]:
    """Upper case, U -> T (with `rna`), alignment gaps removed: (sequence, NORMALISATIONS
    applied)."""
    seq = raw.upper()
    applied = {
        "lowercase": seq != raw,
        "rna": rna and "U" in seq,
        "degapped": "-" in seq or "." in seq,
    }
    if rna:
        seq = seq.replace("U", "T")
    seq = seq.replace("-", "").replace(".", "")
    return seq, [name for name in NORMALISATIONS if applied[name]]


@dataclass
class Read:
    seq: str  # the kept letters ("" when dropped)
    applied: set[str]  # NORMALISATIONS applied
    reason: str | None  # why it is dropped: "ambiguous", "too_short", "too_long"; None: kept


def check(pieces, policy: Policy, where: str) -> Read:
    """Normalise a read given in pieces and apply the policies, holding at most the letters
    a kept read can have (--truncate's, else Policy.longest).

    Every letter is checked, in order: the first character that is no code of the
    policy's alphabet (LETTERS) is an error; ambiguity codes drop the read (or are an
    error) wherever they are, also beyond a --truncate cut; then --truncate cuts, and the
    length limits apply.
    """
    letters = LETTERS[policy.alphabet]
    keep = policy.truncate or policy.longest
    held, length, applied, ambiguous = [], 0, set(), None
    for raw in pieces:
        piece, names = normalise(raw, letters.rna)
        applied.update(names)
        invalid = letters.invalid.search(piece)
        if invalid:
            char = invalid.group()
            hint = letters.hint if char.isalpha() else ""
            raise UserError(f"{where}: {char!r} at position {length + invalid.start() + 1} is "
                            f"not {letters.code}{hint}")
        bad = letters.not_kept.search(piece) if ambiguous is None else None
        if bad:
            ambiguous = (bad.group(), length + bad.start() + 1)
        if length < keep:
            held.append(piece[: keep - length])
        length += len(piece)
    if ambiguous:
        if policy.ambiguous == "error":
            letter, position = ambiguous
            raise UserError(f"{where}: letter {letter!r} at position {position} is not A, C, G or T")
        return Read("", applied, "ambiguous")
    if policy.truncate is not None:
        # As AmpliconNoise's Truncate: longer reads are cut, shorter ones dropped.
        if length < policy.truncate:
            return Read("", applied, "too_short")
        length = policy.truncate
    if length < policy.min_length:
        return Read("", applied, "too_short")
    if length > policy.longest:
        return Read("", applied, "too_long")
    return Read("".join(held), applied, None)


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


def _ingest_sample(row: SampleReport, sample: int, uniques: _Uniques, policy: Policy,
                   earlier: int) -> None:
    """Read one sample into `uniques` and its report row. earlier: the abundance of the
    samples before it; all of it must stay within the tables' int64."""
    for number, title, letters in read_records(row.file):
        rid, size = record_id(row.file, number, title)
        if earlier + row.abundance + size > INT64_MAX:
            raise UserError(f"{row.file}:{rid}: the ;size= abundances of the inputs add up to "
                            "more than 2^63 - 1")
        row.records += 1
        row.abundance += size
        read = check(letters, policy, f"{row.file}:{rid}")
        for name in read.applied:
            setattr(row, name, getattr(row, name) + 1)
        if read.reason is not None:
            setattr(row, f"dropped_{read.reason}", getattr(row, f"dropped_{read.reason}") + 1)
            continue
        row.kept += 1
        row.abundance_kept += size
        if uniques.add(read.seq, rid, size, sample, row.file):
            row.unique += 1
        else:
            row.duplicate += 1


def _total_row(rows: list[SampleReport]) -> SampleReport:
    total = SampleReport(sample="all", file="")
    for f in fields(SampleReport):
        if f.name not in ("sample", "file"):
            setattr(total, f.name, sum(getattr(r, f.name) for r in rows))
    return total


def check_streams(paths: list[str]) -> None:
    """Refuse to read one pipe, FIFO or terminal twice (standard input is one): its data
    goes to the first reader only, and a second open of a FIFO would wait forever."""
    seen = {}
    for path in paths:
        try:
            info = os.fstat(0) if path == STDIN else os.stat(path)
        except OSError:
            continue  # reading it gives the error
        if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen:
            raise UserError(f"{path}: the same stream as {seen[key]}, which is read once (a "
                            "pipe, FIFO or standard input can be an input only once)")
        seen[key] = path


def ingest(
    inputs: list[tuple[str, str]],
    *,
    ambiguous: str = "drop",
    min_length: int = 1,
    max_length: int | None = None,
    truncate: int | None = None,
    alphabet: str = "dna",
) -> IngestResult:
    """Read (sample, file) pairs in order and dereplicate all kept reads together."""
    policy = Policy(ambiguous, min_length, max_length, truncate, alphabet)
    policy.validate()
    if not inputs:
        raise UserError("no input files")
    names = [name for name, _ in inputs]
    for name, path in inputs:
        if name in RESERVED_SAMPLES:
            raise UserError(f"{path}: sample name {name!r} is reserved; name it with -i NAME={path}")
        if names.count(name) > 1:
            raise UserError(f"{path}: sample name {name!r} is used by more than one input")
    check_streams([path for _, path in inputs])

    uniques = _Uniques(len(inputs))
    rows = [SampleReport(sample=name, file=path) for name, path in inputs]
    for k, row in enumerate(rows):
        _ingest_sample(row, k, uniques, policy, sum(r.abundance for r in rows[:k]))
    total = _total_row(rows)
    if total.records == 0:
        files = [row.file for row in rows]
        raise UserError(f"{files[0]}: empty file (no records)" if len(files) == 1 else
                        f"every input is an empty file (no records): {', '.join(files)}")
    if total.kept == 0:
        raise UserError(
            f"no sequences left: all {total.records} records were dropped (ambiguous "
            f"{total.dropped_ambiguous}, too short {total.dropped_too_short}, "
            f"too long {total.dropped_too_long})"
        )

    for row in rows:
        if row.kept == 0:
            log.warning("sample %s (%s): %s; it stays in the tables with no reads", row.sample,
                        row.file, "empty file (no records)" if row.records == 0 else
                        f"no reads left of {row.records} (see the report)")

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


def log_report(result: IngestResult) -> None:
    """What each sample and all of them held, kept and dropped, for the log."""
    for row in result.report.itertuples(index=False):
        log.info("%s: %d records read, %d kept (%d new sequences, %d duplicates), dropped %d "
                 "ambiguous, %d too short, %d too long",
                 f"sample {row.sample} ({row.file})" if row.file else "all samples",
                 row.records, row.kept, row.unique, row.duplicate, row.dropped_ambiguous,
                 row.dropped_too_short, row.dropped_too_long)
    log.info("%d unique sequences", len(result.seqs))


def write_outputs(result: IngestResult, fasta: str, abundance: str, report: str) -> None:
    with atomic_open(fasta) as out:
        for rid, total, seq in zip(result.ids, result.abundance["total"], result.seqs):
            out.write(f">{rid};size={total}\n{seq}\n")
    with atomic_open(abundance) as out:
        result.abundance.to_csv(out, sep="\t", lineterminator="\n")
    with atomic_open(report) as out:
        result.report.to_csv(out, sep="\t", index=False, lineterminator="\n")
