"""CPU distance throughput on real 454 reads (AmpliconNoise's C005).

    python benchmarks/bench_cpu_distance.py [--reads 600] [--threads 1 2] [--dense]
                                            [--data ../shared/data]

All pairs of the first --reads C005 reads go through the distance stage (bins, tiles,
Numba kernel) once per thread count, after a warm-up that compiles/loads the kernel:
every pair kept with all its counts, or with --dense every pair's distance alone (the
dense outputs' path: the backend's seqdist_dense). Prints cells, seconds, GCUPS and GCUPS
per core (cells = len_a * len_b).
"""
from __future__ import annotations

import argparse
import gzip
import platform
import time
from pathlib import Path

import numpy as np
from Bio import SeqIO

from seqpairs import backends, scoring
from seqpairs.formats.fasta import SequenceSet
from seqpairs.pairs import distance
from seqpairs.pairs import tiling as binning
from seqpairs.scoring.alphabet import encode_all as encode


def load(data: Path, reads: int) -> SequenceSet:
    with gzip.open(data / "C005_454.fa.gz", "rt") as fh:
        recs = [r for _, r in zip(range(reads), SeqIO.parse(fh, "fasta"))]
    seqs = [str(r.seq) for r in recs]
    codes, offsets = encode(seqs)
    return SequenceSet([r.id for r in recs], seqs, np.ones(len(seqs), dtype=np.int64), codes, offsets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=600)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--dense", action="store_true",
                        help="every pair's distance alone, as the dense outputs take them")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = parser.parse_args()
    seqs = load(args.data, args.reads)
    bins = binning.make_bins(seqs.lengths, 25)
    tiles = binning.make_tiles(seqs.lengths, bins, 250_000)
    cells = int(tiles["cells"].sum())
    cpu, scheme = backends.select("cpu"), scoring.get("seqdist")
    path = dict(dense=True, edges=False) if args.dense else {}
    # warm-up: load the compiled kernel
    distance.compute(seqs, bins, tiles[:1], backend=cpu, scheme=scheme, threads=1, **path)
    print(f"# {platform.processor() or platform.machine()}, {args.reads} C005 reads, "
          f"{seqs.n * (seqs.n - 1) // 2} pairs, {cells:.3e} cells"
          f"{', dense' if args.dense else ', every pair kept'}")
    print("threads\tseconds\tGCUPS\tGCUPS_per_core")
    for threads in args.threads:
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            distance.compute(seqs, bins, tiles, backend=cpu, scheme=scheme, threads=threads,
                             **path)
            best = min(best, time.perf_counter() - start)
        gcups = cells / best / 1e9
        print(f"{threads}\t{best:.2f}\t{gcups:.3f}\t{gcups / threads:.3f}")


if __name__ == "__main__":
    main()
