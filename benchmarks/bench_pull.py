"""Work pulled by workers of different speed (issue 16, items 3 and 4): `seqpairs distance`
at the workflow's thresholds on 400 bp reads of benchmarks/communities.py, as one process
on the GPU alone, as one process with the CPU cores beside the GPU (`--backend hybrid
--threads N`), and as one MPI job of one GPU rank beside CPU ranks (mpiexec's MPMD form:
one command line per kind of rank), edge lists compared byte for byte:

    python benchmarks/bench_pull.py [--log2n 14] [--cpu-ranks 15] [--tile-pairs 20000]
                                    [--backend gpu] [--hybrid-threads 16]
                                    [--mpiexec "mpiexec ..."]

Each rank logs its work lists and its time busy with them of the time from its first
request to its end (parallel.timed; rank 0's end waits for the last rank) and its cells.
Utilisation of the ranks' time = their busy time / (ranks x the longest of those times);
of their capacity = all cells / (that time x the sum of the ranks' rates, cells / busy
time): 1.0 when every rank, fast or slow, computes until the end.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from communities import community, write_fasta  # noqa: E402

THRESHOLDS = ["--max-distance", "0.1", "--candidate-identity", "0.97"]
WORK = re.compile(r"rank (\d+)/\d+ seqpairs\.parallel: work lists: (\d+), cost [\d.e+]+, "
                  r"busy ([\d.]+) s of ([\d.]+) s")
HELPED = re.compile(r"work lists of the (\w+) (?:backend|helper): (\d+), cost ([\d.e+]+), "
                    r"busy ([\d.]+) s of ([\d.]+) s")
CELLS = re.compile(r"rank (\d+)/\d+ seqpairs\.distance: distance: done, ([\d.e+]+) cells")


def distance(fasta: Path, edges: Path, backend: str, threads: int) -> list[str]:
    bins, tiles = fasta.with_suffix(".bins.tsv"), fasta.with_suffix(".tiles.tsv")
    return [sys.executable, "-m", "seqpairs", "distance", "-i", str(fasta), "--bins",
            str(bins), "--tiles", str(tiles), "--edges", str(edges), "--backend", backend,
            "--threads", str(threads), *THRESHOLDS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=14)
    parser.add_argument("--cpu-ranks", type=int, default=15,
                        help="CPU ranks beside the GPU rank (0: no MPI run)")
    parser.add_argument("--backend", default="gpu", help="rank 0's backend (default gpu)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the MPI run")
    parser.add_argument("--tile-pairs", type=int, default=20000,
                        help="pairs per tile (seqpairs bin): the grain of the work lists")
    parser.add_argument("--hybrid-threads", type=int, default=os.cpu_count(),
                        help="threads of the hybrid run (0: no hybrid run)")
    parser.add_argument("--mpiexec", default="mpiexec --allow-run-as-root --oversubscribe "
                        "--bind-to none")
    args = parser.parse_args()
    print(f"# {datetime.date.today()}, 2^{args.log2n} reads of 400 bp, tiles of "
          f"{args.tile_pairs} pairs")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fasta = tmp / "reads.fasta"
        write_fasta(fasta, community(2 ** args.log2n))
        subprocess.run([sys.executable, "-m", "seqpairs", "-q", "bin", "-i", str(fasta),
                        "--bins", str(fasta.with_suffix(".bins.tsv")), "--tiles",
                        str(fasta.with_suffix(".tiles.tsv")), "--tile-pairs",
                        str(args.tile_pairs)], check=True)
        start = time.perf_counter()
        subprocess.run(distance(fasta, tmp / "gpu.npz", args.backend, 1), check=True,
                       capture_output=True)
        alone = time.perf_counter() - start
        print(f"rank 0's backend ({args.backend}) alone, one process: {alone:.1f} s")
        if args.hybrid_threads:
            start = time.perf_counter()
            proc = subprocess.run(distance(fasta, tmp / "hybrid.npz", "hybrid",
                                           args.hybrid_threads),
                                  check=True, capture_output=True, text=True)
            hybrid = time.perf_counter() - start
            workers = {m[1]: (int(m[2]), float(m[3]), float(m[4]), float(m[5]))
                       for m in HELPED.finditer(proc.stderr)}
            total = sum(cost for _, cost, _, _ in workers.values())
            same = (tmp / "gpu.npz").read_bytes() == (tmp / "hybrid.npz").read_bytes()
            print(f"hybrid, one process, {args.hybrid_threads} threads: {hybrid:.1f} s "
                  f"({hybrid / alone:.3f} of the GPU alone); same bytes {same}")
            for who, (lists, cost, busy, of) in workers.items():
                print(f"  {who}: {lists} lists, {cost / total:.1%} of the cells, busy "
                      f"{busy:.2f} s of {of:.2f} s")
        if not args.cpu_ranks:
            return
        command = [*shlex.split(args.mpiexec), "-n", "1",
                   *distance(fasta, tmp / "mixed.npz", args.backend, 1), ":", "-n",
                   str(args.cpu_ranks), *distance(fasta, tmp / "mixed.npz", "cpu", 1)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired as exc:
            sys.exit(f"the MPI run did not end in {args.timeout} s:\n"
                     f"{(exc.stderr or b'').decode(errors='replace')[-5000:]}")
        mixed = time.perf_counter() - start
        if proc.returncode:
            sys.exit(proc.stderr[-3000:])
        ranks = {int(m[1]): (int(m[2]), float(m[3]), float(m[4]))
                 for m in WORK.finditer(proc.stderr)}
        span = max(of for _, _, of in ranks.values())
        busy = sum(b for _, b, _ in ranks.values())
        cells = {int(m[1]): float(m[2]) for m in CELLS.finditer(proc.stderr)}
        # the capacity's: cells done / (span x the ranks' rates, each its cells / busy time)
        capacity = sum(cells.values()) / (span * sum(cells[r] / ranks[r][1] for r in ranks
                                                     if cells.get(r) and ranks[r][1] > 0))
        same = (tmp / "gpu.npz").read_bytes() == (tmp / "mixed.npz").read_bytes()
        print(f"1 {args.backend} rank + {args.cpu_ranks} CPU ranks: {mixed:.1f} s, "
              f"utilisation {busy / (len(ranks) * span):.3f} of the ranks' time, "
              f"{capacity:.3f} of their capacity; same bytes {same}")
        print("| rank | backend | lists | cells | busy s | of s |")
        print("|---|---|---|---|---|---|")
        for rank, (lists, b, of) in sorted(ranks.items()):
            print(f"| {rank} | {args.backend if rank == 0 else 'cpu'} | {lists} | "
                  f"{cells.get(rank, 0):.3g} | {b:.2f} | {of:.2f} |")


if __name__ == "__main__":
    main()
