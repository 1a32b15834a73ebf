"""The distance stage's edge-list write on its own: Spills (formats/runs.py) at --memory
MiB fed N synthetic kept pairs of 2^16 sequences in batches, as the stage hands them,
then merged and written, each step timed. Under MPI (`mpiexec -n P python
benchmarks/bench_write.py`) the pairs are dealt among the ranks in batches, and the
stage's own tail runs: every rank's runs cut into key ranges and each rank's ranges
merged from every rank's slices (stages.distance.key_ranges), then every rank writes its
ranges' rows of the one file in place (write_edges_together), rank 0 the zip's headers
last:

    [mpiexec -n P] python benchmarks/bench_write.py [--pairs 2e7] [--memory 256]
                                                     [--folder /tmp] [--threads T]

This is the tail of `seqpairs distance` after its computing (issue 21). `--runs K`
times the merge alone, in one thread, as a range's owner merges K runs (a rank's slices
of every rank's runs): the pairs dealt at random to K sorted runs in memory, merged
through runs.edge_pieces within --memory.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from seqpairs import parallel
from seqpairs.formats.distances import Edges
from seqpairs.formats.edge_writer import write_edges_together
from seqpairs.formats.runs import MemoryRun, Spill, edge_pieces, run_columns
from seqpairs.stages.distance import key_ranges

SEQUENCES = 1 << 16
BATCH = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=float, default=2e7)
    parser.add_argument("--memory", type=float, default=256, help="MiB, as --memory")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads that make and write the rows, as --threads")
    parser.add_argument("--runs", type=int, help="time the merge of this many runs alone")
    args = parser.parse_args()
    if args.runs:
        return merge_alone(int(args.pairs), args.runs, int(args.memory * (1 << 20)))
    executor = parallel.current()
    count, budget = int(args.pairs), int(args.memory * (1 << 20))
    rng = np.random.default_rng(1)
    keys = np.sort(rng.choice(SEQUENCES * (SEQUENCES - 1) // 2, count, replace=False))
    keys = rng.permutation(keys)  # distinct pairs, in the arbitrary order tiles finish
    about = Edges(SEQUENCES, [f"s{k}" for k in range(SEQUENCES)], None, None, {},
                  max_distance=0.1, candidate_identity=0.97, iddef=2, sequences="-",
                  scoring="seqdist").empty()
    out = args.folder / "bench_write.npz"
    with tempfile.TemporaryDirectory(dir=args.folder) as scratch:
        executor.barrier()
        times = [time.perf_counter()]
        spill = Spill(budget, Path(scratch), out.name, about.layout)
        for first in range(executor.rank * BATCH, count, executor.size * BATCH):
            part = keys[first:first + BATCH]
            i = ((1 + np.sqrt(1 + 8 * part)) / 2).astype(np.int64)
            i = np.where(i * (i - 1) // 2 > part, i - 1, i)
            length = rng.integers(390, 420, len(part)).astype(np.int32)
            spill.add(i, part - i * (i - 1) // 2, rng.random(len(part)) * 40, length,
                      length - 10, length - 2, np.zeros(len(part), np.int32))
        executor.barrier()
        times.append(time.perf_counter())
        owned, counts = key_ranges(executor, spill, SEQUENCES)
        executor.barrier()
        times.append(time.perf_counter())
        write_edges_together(executor, out, about, counts, owned, budget, args.threads)
        executor.barrier()
        times.append(time.perf_counter())
        spill.close()
    if executor.root:
        add, merge, write = np.diff(times)
        print(f"{count} pairs, {executor.size} ranks, --memory {args.memory:g}: add "
              f"{add:.1f} s, merge {merge:.1f} s, write "
              f"{write:.1f} s, {out.stat().st_size / 1e9:.2f} GB")
        out.unlink()


def merge_alone(count: int, runs: int, budget: int) -> None:
    rng = np.random.default_rng(1)
    keys = np.sort(rng.choice(SEQUENCES * (SEQUENCES - 1) // 2, count, replace=False))
    owner = rng.integers(0, runs, count)
    layout = Edges(1, [], None, None, {}, max_distance=0.1).layout
    columns = run_columns(layout)
    parts = [MemoryRun({name: keys[owner == r] if name == "key" else
                        np.zeros((owner == r).sum(), dtype) for name, dtype in columns.items()},
                       columns) for r in range(runs)]
    start, merged = time.perf_counter(), 0
    for piece in edge_pieces(parts, budget, layout):
        merged += len(piece["key"])
    seconds = time.perf_counter() - start
    print(f"{merged} pairs in {runs} runs merged within {budget >> 20} MiB: {seconds:.2f} s, "
          f"{merged / seconds / 1e6:.1f} M pairs/s")


if __name__ == "__main__":
    main()
