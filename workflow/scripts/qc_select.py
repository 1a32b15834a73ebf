"""Rule qc_select (a Snakemake script): the unique sequences that pass the read QC after
dereplication (vsearch's de novo chimera check, where it ran, and the minimum abundance),
as unique.fasta and abundance.tsv in ingest's formats and order, and the QC funnel.

The funnel (funnel.tsv: `step`, `reads`, `uniques`) counts what each step kept: the
samples' records, the expected-error filter's output, what ingest kept (valid sequences
within its length limits, dereplicated), the non-chimeras, those of at least the minimum
abundance. Counting the records of the raw and filtered files is independent of vsearch's
log.
"""
import gzip
import sys

import pandas as pd
from Bio.SeqIO.FastaIO import SimpleFastaParser
from Bio.SeqIO.QualityIO import FastqGeneralIterator

from seqpairs.formats.atomic import atomic_open


def opened(path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def records(path) -> int:
    """Records of a FASTQ or FASTA file (by its first character)."""
    with opened(path) as fh:
        parser = FastqGeneralIterator if fh.read(1) == "@" else SimpleFastaParser
        fh.seek(0)
        return sum(1 for _ in parser(fh))


def unique_id(header: str) -> str:
    return header.split()[0].split(";size=")[0]


def main(s) -> None:
    table = pd.read_csv(s.input.abundance, sep="\t", dtype={"id": str}, keep_default_na=False)
    with open(s.input.unique) as fh:
        entries = [(unique_id(h), h, seq) for h, seq in SimpleFastaParser(fh)]
    if [e[0] for e in entries] != table["id"].tolist():
        raise SystemExit(f"{s.input.unique} and {s.input.abundance}: different sequences")
    steps = [("reads", sum(map(records, s.input.raw)), None),
             ("expected errors", sum(map(records, s.input.samples)), None),
             ("dereplicated", int(table["total"].sum()), len(table))]
    keep = pd.Series(True, index=table.index)
    if s.input.nonchimeras:
        with open(s.input.nonchimeras[0]) as fh:
            clean = {unique_id(h) for h, _ in SimpleFastaParser(fh)}
        keep &= table["id"].isin(clean)
        steps.append(("non-chimeric", int(table["total"][keep].sum()), int(keep.sum())))
    keep &= table["total"] >= s.params.min_size
    steps.append((f"abundance >= {s.params.min_size}", int(table["total"][keep].sum()),
                  int(keep.sum())))
    with atomic_open(s.output.unique) as out:
        out.writelines(f">{h}\n{seq}\n" for (_, h, seq), k in zip(entries, keep) if k)
    with atomic_open(s.output.abundance) as out:
        table[keep].to_csv(out, sep="\t", index=False, lineterminator="\n")
    funnel = pd.DataFrame(steps, columns=["step", "reads", "uniques"]).astype(
        {"uniques": "Int64"})
    with atomic_open(s.output.funnel) as out:
        funnel.to_csv(out, sep="\t", index=False, lineterminator="\n", na_rep="NA")
    for step, reads, uniques in steps:
        print(f"{step}: {reads} reads" + ("" if uniques is None else f", {uniques} unique"))


with open(snakemake.log[0], "w") as log:  # noqa: F821
    sys.stdout = log
    main(snakemake)  # noqa: F821
