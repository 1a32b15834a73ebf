"""End-to-end time of `seqpairs psse` (read, shuffle and align, fit, write) against one CPU core.

    python benchmarks/bench_psse_cli.py [--pairs 10000] [--shuffles 1000] [--length 250]
                                        [--cpu-pairs 20]

Writes --pairs related DNA pairs (a random query, its target with 15% substitutions) as a
FASTA and a pairs table, times `seqpairs -q psse --backend gpu` on all of them, then
`--backend cpu --threads 1` on the first --cpu-pairs of them, and prints the wall times,
pairs per second and the speed-up of the GPU run over one CPU core (per pair).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def write_pairs(folder: Path, pairs: int, length: int, seed: int = 5) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    fasta, table = folder / "seqs.fasta", folder / "pairs.tsv"
    with open(fasta, "w") as fa, open(table, "w") as tsv:
        tsv.write("query\ttarget\n")
        for k in range(pairs):
            query = rng.choice(list("ACGT"), length)
            target = query.copy()
            hit = rng.random(length) < 0.15
            target[hit] = rng.choice(list("ACGT"), hit.sum())
            fa.write(f">q{k}\n{''.join(query)}\n>t{k}\n{''.join(target)}\n")
            tsv.write(f"q{k}\tt{k}\n")
    return fasta, table


def head(table: Path, rows: int, out: Path) -> Path:
    lines = table.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[: rows + 1]))
    return out


def psse(fasta: Path, table: Path, out: Path, shuffles: int, *options: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "psse", "-i", str(fasta), "--pairs",
                    str(table), "-o", str(out), "--shuffles", str(shuffles), *options],
                   check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--shuffles", type=int, default=1000)
    parser.add_argument("--length", type=int, default=250)
    parser.add_argument("--cpu-pairs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fasta, table = write_pairs(folder, args.pairs, args.length)
        psse(fasta, head(table, 2, folder / "warm.tsv"), folder / "warm.out", 10,
             "--backend", "gpu")  # compile the kernels (NVRTC cache) outside the timing
        gpu = psse(fasta, table, folder / "gpu.tsv", args.shuffles, "--backend", "gpu")
        small = head(table, args.cpu_pairs, folder / "small.tsv")
        cpu = psse(fasta, small, folder / "cpu.tsv", args.shuffles, "--backend", "cpu",
                   "--threads", "1")
        # E- and q-values depend on the number of pairs tested; the rest must be equal.
        cpu_rows = pd.read_csv(folder / "cpu.tsv", sep="\t").drop(columns=["evalue", "qvalue"])
        gpu_rows = pd.read_csv(folder / "gpu.tsv", sep="\t").drop(columns=["evalue", "qvalue"])
        same = cpu_rows.equals(gpu_rows.head(args.cpu_pairs))
    cells = args.pairs * args.length**2 * (args.shuffles + 1)
    print(f"seqpairs psse, {args.pairs} DNA pairs x {args.shuffles} shuffles at {args.length} bp "
          f"({cells:.3g} cells)")
    print(f"gpu: {gpu:.1f} s wall, {args.pairs / gpu:.0f} pairs/s, {cells / gpu / 1e9:.0f} GCUPS "
          "end to end")
    per_pair_cpu = cpu / args.cpu_pairs
    print(f"cpu, 1 thread, first {args.cpu_pairs} pairs: {cpu:.1f} s wall, {per_pair_cpu:.2f} s "
          f"per pair; speed-up of the gpu run per pair: {per_pair_cpu / (gpu / args.pairs):.0f}x")
    print(f"first {args.cpu_pairs} rows equal on cpu and gpu (E and q aside): {same}")


if __name__ == "__main__":
    main()
