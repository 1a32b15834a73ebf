"""Peak host memory of `seqpairs distance` with sparse output, against N.

    python benchmarks/bench_memory.py [--sizes 10000 20000 40000] [--length 20]
                                      [--backend cpu] [--threads T]

For each N: N short reads (families of 2,000 references, 3% substitutions, so a known
share of the pairs is kept) written as FASTA, then `seqpairs distance --edges` run as a
child process; its peak resident set (ru_maxrss from wait4) is printed with the wall
time, the pairs kept and, for scale, the N(N-1)/2 doubles a dense matrix would need.
Memory that grows with N and the kept pairs, not with N^2, shows as a peak far below the
dense size that grows about linearly in N.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FAMILIES = 2000


def write_reads(path: Path, n: int, length: int, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    roots = rng.choice(list("ACGT"), (FAMILIES, length))
    with open(path, "w") as fh:
        for k in range(n):
            s = roots[k % FAMILIES].copy()
            hit = rng.random(length) < 0.03
            s[hit] = rng.choice(list("ACGT"), hit.sum())
            fh.write(f">r{k}\n{''.join(s)}\n")


def peak_rss(cmd: list[str]) -> tuple[float, float]:
    """(peak RSS in MiB, wall seconds) of one child process; raises if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed with status {proc.returncode}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start  # ru_maxrss is in KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    print(f"backend {args.backend}, reads of {args.length} bp, {FAMILIES} families")
    print(f"{'N':>8} {'pairs':>14} {'kept':>12} {'peak RSS MiB':>13} {'dense MiB':>10} "
          f"{'wall s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            fasta, edges = Path(tmp) / f"{n}.fasta", Path(tmp) / f"{n}.npz"
            write_reads(fasta, n, args.length)
            cmd = [sys.executable, "-m", "seqpairs", "-q", "distance", "-i", str(fasta),
                   "--backend", args.backend, "--max-distance", "0.1", "--candidate-identity",
                   "0.97", "--edges", str(edges)]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            rss, wall = peak_rss(cmd)
            with np.load(edges) as npz:
                kept = len(npz["i"])
            pairs = n * (n - 1) // 2
            print(f"{n:>8} {pairs:>14,} {kept:>12,} {rss:>13.0f} {pairs * 8 / 2**20:>10.0f} "
                  f"{wall:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
