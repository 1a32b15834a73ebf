"""SSCA#1's kernel 1 with `seqpairs scan`'s engine on several ranks (one GPU a rank, or CPU
ranks), the target split into blocks that the ranks pull (issue 21, item 5). Run it under
MPI once per rank count:

    mpiexec -n P python benchmarks/bench_scan_mpi.py [--query 4096] [--target 1e9]
                                                     [--backend gpu]

Every rank builds bench_scan.py's data (the same seed: the same query and target), plans
the blocks for whole waves of all ranks' slots, and pulls its blocks through the
executor, as `seqpairs scan` does. Each rank times kernel 1 (rows and peaks) on its blocks
after a warm-up; rank 0 prints the wall time from a common start to the last rank's end,
each rank's time, their utilisation (sum / (P x the longest)), GCUPS, and a digest of the
hits (scores and ends, found from the gathered peaks), which must be the same for every
rank count. Scaling against one GPU: T1 / TP from two runs of the same sizes.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import SCHEME, data  # noqa: E402

from seqpairs import backends, parallel  # noqa: E402
from seqpairs.pairs import scan  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", type=int, default=4096)
    parser.add_argument("--target", type=float, default=1e9)
    parser.add_argument("--backend", default="gpu")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--top", type=int, default=200)
    args = parser.parse_args()
    executor = parallel.current()
    backend = backends.select(args.backend, executor.device)
    query, target = data(args.query, int(args.target))
    scan.scan(backend, SCHEME, [query[:64]], [target[:100_000]], 5, threads=args.threads)
    slots = scan.slots(backend, SCHEME, [query], args.threads)
    blocks = scan.plan(SCHEME, [query], [target], None, None, args.top, 1,
                       slots * executor.size, scan.per_call(backend))
    executor.barrier()
    start = time.perf_counter()
    found = scan.block_peaks(backend, SCHEME, [query], [target], blocks, args.top, 1,
                             args.threads, work=scan.in_waves(blocks, slots, executor.pull,
                                                    scan.per_call(backend)))
    own = time.perf_counter() - start
    gathered = executor.gather(found[0], found[1:])
    times = executor.gather(np.array([executor.rank]), (np.array([own]),))
    executor.barrier()
    wall = time.perf_counter() - start
    if not executor.root:
        return
    every = np.arange(len(blocks["lo"]))
    hits = scan.hits(backend, SCHEME, [query], [target], blocks, every, *gathered, args.top,
                     args.threads)
    (rank_times,) = times
    cells = args.query * len(target)
    print(f"ranks {executor.size} ({backend.name}), query {args.query} x {len(target)} letters, "
          f"{len(blocks['lo'])} blocks: wall {wall:.3f} s, rank times "
          f"{np.round(rank_times, 3).tolist()}, utilisation "
          f"{rank_times.sum() / (executor.size * rank_times.max()):.3f}, "
          f"{cells / wall / 1e9:.1f} GCUPS; {len(hits.score)} hits, digest "
          f"{hashlib.sha256(np.stack([hits.score, hits.qend, hits.tend]).tobytes()).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
