"""Truong et al.'s Table 5 shape (issue 16, item 5) on real full-length 16S genes: the
pairs at >= 97% identity among the first N genes of ../shared/data/ten_16s.100.fa.gz
without ambiguity codes (N = 200: 19,900 pairs), found three ways, whole processes:

  cpu traceback   `seqpairs filter --scoring vsearch`: every pair aligned and traced on
                  the CPU (vsearch's scoring; Truong's CPU-only run)
  cpu seqdist     `seqpairs filter --backend cpu`: SeqDist's identity bounds on the CPU,
                  then a traceback of the pairs they cannot rule out
  gpu seqdist     `seqpairs filter --backend gpu`: the bounds on the GPU, the tracebacks
                  on the CPU (Truong's GPU filter + CPU traceback)

    python benchmarks/bench_truong.py [--genes 200] [--all] [--threads 16]

Prints seconds, pairs per second and the pairs kept. --all: also every gene without
ambiguity codes (3,145 of 3,994), on the GPU path only. SEQPAIRS_DATA overrides the data
folder.
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from Bio.SeqIO.FastaIO import SimpleFastaParser

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SEQPAIRS_DATA", ROOT.parent / "shared" / "data"))
GENES = DATA / "ten_16s.100.fa.gz"
IDENTITY = "0.97"
WAYS = {
    "cpu traceback": ["--scoring", "vsearch", "--backend", "cpu"],
    "cpu seqdist": ["--backend", "cpu"],
    "gpu seqdist": ["--backend", "gpu"],
}


def genes_without_ambiguity(limit: int | None):
    """(id, sequence) of the genes in file order whose letters are all ACGT."""
    with gzip.open(GENES, "rt") as fasta:
        genes = [(title.split()[0], seq.upper()) for title, seq in SimpleFastaParser(fasta)
                 if set(seq.upper()) <= set("ACGT")]
    return genes[:limit]


def run(fasta: Path, out: Path, way: list[str], threads: int) -> tuple[float, int]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "filter", "-i", str(fasta),
                    "--identity", IDENTITY, "--threads", str(threads), *way, "-o", str(out)],
                   check=True)
    seconds = time.perf_counter() - start
    with open(out) as table:
        return seconds, sum(1 for _ in table) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--genes", type=int, default=200)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--ways", nargs="+", choices=tuple(WAYS), default=list(WAYS))
    args = parser.parse_args()
    print(f"# {datetime.date.today()}, {args.threads} threads, identity >= {IDENTITY}")
    print("| genes | pairs | way | seconds | pairs/s | pairs kept |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(args.genes, args.ways)] + ([(None, ["gpu seqdist"])] if args.all else [])
        for limit, ways in runs:
            genes = genes_without_ambiguity(limit)
            fasta = Path(tmp) / f"genes_{len(genes)}.fasta"
            fasta.write_text("".join(f">{name};size=1\n{seq}\n" for name, seq in genes))
            pairs = len(genes) * (len(genes) - 1) // 2
            for way in ways:
                seconds, kept = run(fasta, Path(tmp) / "kept.tsv", WAYS[way], args.threads)
                print(f"| {len(genes)} | {pairs:,} | {way} | {seconds:.1f} | "
                      f"{pairs / seconds:,.0f} | {kept:,} |", flush=True)


if __name__ == "__main__":
    main()
