"""The distance stage at the workflow's thresholds with and without exact pruning
(docs/pruning.md), whole processes, on two kinds of data of 400 bp:

    python benchmarks/bench_prune.py [--backend gpu] [--log2n 12 14 16] [--compare 12 14]
                                     [--data families community] [--threads T]

  families   bench_distance.py's end-to-end data: families of 256 sequences, each a random
             root with 3% substitutions (pairs of different families are unrelated)
  community  benchmarks/communities.py: 64 taxa on a tree, 2-20% apart, reads with
             sequencing errors (every pair is of one gene)

For each size 2^k: `seqpairs distance --max-distance 0.1 --candidate-identity 0.97 --edges`
(pruned), and for the sizes in --compare also with --no-prune, whose edge list must be the
same bytes. Prints seconds, pairs per second, the pruning's log line (where each pair was
decided) and the run extrapolated to 2^18 sequences (seconds x (2^18 / 2^k)^2).
"""
from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_distance import family  # noqa: E402
from communities import community, write_fasta  # noqa: E402

THRESHOLDS = ["--max-distance", "0.1", "--candidate-identity", "0.97"]


def families(n: int, seed: int = 2026):
    rng = np.random.default_rng(seed)
    seqs = []
    while len(seqs) < n:
        seqs += family(rng, 256, 400, rate=0.03)
    return [(s, 1) for s in seqs[:n]]


def run(fasta: Path, edges: Path, backend: str, threads, extra=()) -> tuple[float, str]:
    command = [sys.executable, "-m", "seqpairs", "distance", "-i", str(fasta), "--backend",
               backend, *THRESHOLDS, "--edges", str(edges), *extra]
    if threads:
        command += ["--threads", str(threads)]
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    found = re.search(r"pruning: (.*)", done.stderr)
    return seconds, found.group(1) if found else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gpu")
    parser.add_argument("--log2n", type=int, nargs="+", default=[12, 14, 16])
    parser.add_argument("--compare", type=int, nargs="*", default=[12, 14])
    parser.add_argument("--data", nargs="+", choices=("families", "community"),
                        default=["families", "community"])
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    print(f"# bench_prune.py, backend {args.backend}, {datetime.date.today()}")
    print("data\tlog2n\tpairs\tkept\tpruned_s\tfull_s\tsame_bytes\tpairs_per_s\t2^18_h\t"
          "decided")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for data in args.data:
            for log2n in args.log2n:
                n = 2**log2n
                reads = families(n) if data == "families" else community(n)
                fasta = tmp / f"{data}-{log2n}.fasta"
                write_fasta(fasta, reads)
                pruned, decided = run(fasta, tmp / "pruned.npz", args.backend, args.threads)
                kept = len(np.load(tmp / "pruned.npz")["i"])
                full, same = "-", "-"
                if log2n in args.compare:
                    seconds, _ = run(fasta, tmp / "full.npz", args.backend, args.threads,
                                     ["--no-prune"])
                    full = f"{seconds:.1f}"
                    same = (tmp / "full.npz").read_bytes() == (tmp / "pruned.npz").read_bytes()
                pairs = n * (n - 1) // 2
                big = 2**18 * (2**18 - 1) // 2
                print(f"{data}\t{log2n}\t{pairs}\t{kept}\t{pruned:.1f}\t{full}\t{same}\t"
                      f"{pairs / pruned:.3e}\t{pruned * big / pairs / 3600:.2f}\t{decided}",
                      flush=True)


if __name__ == "__main__":
    main()
