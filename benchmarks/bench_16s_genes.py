"""All pairs of full-length 16S genes at 97% identity, in the shape of Truong et al.'s
Table 5: every pair aligned and traced on the CPU against the GPU counting every pair
and tracing the pairs that pass.

    python benchmarks/bench_16s_genes.py [--genes 200] [--identity 0.97] [--threads N]
                                         [--backend cpu gpu] [--all]

Input: ../shared/data/ten_16s.100.fa.gz beside the checkout (SEQPAIRS_DATA overrides the
folder), the genes without ambiguity codes (ACGT only: 3,145 of its 3,994) in file order;
the first --genes of them (200: 19,900 pairs), and with --all every one of them on the
GPU (pairs per second over 4.9M pairs). Scoring: the registry's vsearch preset (vsearch's
global alignment and identity, iddef 2), so that a pass is what `vsearch
--allpairs_global --id 0.97` keeps. Times are in one process, after a warm-up on 20 genes
(compiled kernels cached): seqpairs.pairs.filter.filter_affine, the table included.
"""
from __future__ import annotations

import argparse
import gzip
import os
import time
from pathlib import Path

import numpy as np
from Bio.SeqIO.FastaIO import SimpleFastaParser

from seqpairs import backends, scoring
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs.filter import filter_affine
from seqpairs.scoring.alphabet import DNA, encode_all

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SEQPAIRS_DATA", ROOT.parent / "shared" / "data"))
# Truong et al.'s one-node throughput, as the issue quotes it (pairs per second)
PAPER = {"CPUs": 149, "GPUs": 359, "CPUs and GPUs": 487}


def clean_genes(path: Path) -> list[str]:
    with gzip.open(path, "rt") as fh:
        seqs = [seq.upper() for _, seq in SimpleFastaParser(fh)]
    return [s for s in seqs if set(s) <= set(DNA)]


def sequence_set(seqs: list[str]) -> SequenceSet:
    codes, offsets = encode_all(seqs)
    return SequenceSet([f"g{k}" for k in range(len(seqs))], seqs,
                       np.ones(len(seqs), dtype=np.int64), codes, offsets)


def timed(seqs, backend, identity: float, threads: int | None) -> tuple[float, int]:
    start = time.perf_counter()
    kept = filter_affine(sequence_set(seqs), scoring.get("vsearch"), backend, identity, 2,
                         threads)
    return time.perf_counter() - start, len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fasta", type=Path, default=DATA / "ten_16s.100.fa.gz")
    parser.add_argument("--genes", type=int, default=200)
    parser.add_argument("--identity", type=float, default=0.97)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--backend", nargs="+", default=["cpu", "gpu"], choices=("cpu", "gpu"))
    parser.add_argument("--all", action="store_true",
                        help="also every gene without ambiguity codes, on the GPU")
    args = parser.parse_args()
    genes = clean_genes(args.fasta)
    chosen = genes[:args.genes]
    pairs = len(chosen) * (len(chosen) - 1) // 2
    print(f"{args.fasta.name}: {len(genes)} genes without ambiguity codes; the first "
          f"{len(chosen)}: {pairs} pairs, {np.mean([len(s) for s in chosen]):.0f} bp on "
          f"average; vsearch preset, --id {args.identity:g}; {os.cpu_count()} cores")
    print("| run | pairs | passed | seconds | pairs/s |")
    print("|---|---|---|---|---|")
    for name in args.backend:
        backend = backends.select(name)
        timed(genes[:20], backend, args.identity, args.threads)  # compiles, caches
        seconds, kept = timed(chosen, backend, args.identity, args.threads)
        what = ("seqpairs cpu: every pair traced" if name == "cpu" else
                "seqpairs gpu: every pair counted, the passing ones traced")
        print(f"| {what} | {pairs} | {kept} | {seconds:.2f} | {pairs / seconds:,.0f} |")
    if args.all:
        every = len(genes) * (len(genes) - 1) // 2
        seconds, kept = timed(genes, backends.select("gpu"), args.identity, args.threads)
        print(f"| seqpairs gpu, all {len(genes)} genes | {every} | {kept} | {seconds:.1f} | "
              f"{every / seconds:,.0f} |")
    for what, rate in PAPER.items():
        print(f"| Truong et al., one node, {what} | | | | {rate} |")


if __name__ == "__main__":
    main()
