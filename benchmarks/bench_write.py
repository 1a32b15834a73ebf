"""The distance stage's edge-list write on its own: a Spill (formats/runs.py) at --memory
MiB fed N synthetic kept pairs of 2^16 sequences in batches, as the stage hands them, then
merged (finish) and written (write_edge_stream), each step timed:

    python benchmarks/bench_write.py [--pairs 2e7] [--memory 256] [--folder /tmp]

This is the root's serial tail of `seqpairs distance` under MPI (issue 21).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from seqpairs.formats.distances import Edges, write_edge_stream
from seqpairs.formats.runs import Spill, edge_columns

SEQUENCES = 1 << 16
BATCH = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=float, default=2e7)
    parser.add_argument("--memory", type=float, default=256, help="MiB, as --memory")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    count, budget = int(args.pairs), int(args.memory * (1 << 20))
    rng = np.random.default_rng(1)
    keys = np.sort(rng.choice(SEQUENCES * (SEQUENCES - 1) // 2, count, replace=False))
    keys = rng.permutation(keys)  # distinct pairs, in the arbitrary order tiles finish
    about = Edges(SEQUENCES, [f"s{k}" for k in range(SEQUENCES)], None, None, {},
                  max_distance=0.1, candidate_identity=0.97, iddef=2, sequences="-",
                  scoring="seqdist").empty()
    out = args.folder / "bench_write.npz"
    with tempfile.TemporaryDirectory(dir=args.folder) as scratch:
        start = time.perf_counter()
        with Spill(budget, Path(scratch), out.name, about.layout) as spill:
            for first in range(0, count, BATCH):
                part = keys[first:first + BATCH]
                i = ((1 + np.sqrt(1 + 8 * part)) / 2).astype(np.int64)
                i = np.where(i * (i - 1) // 2 > part, i - 1, i)
                length = rng.integers(390, 420, len(part)).astype(np.int32)
                spill.add(i, part - i * (i - 1) // 2, rng.random(len(part)) * 40, length,
                          length - 10, length - 2, np.zeros(len(part), np.int32))
            added = time.perf_counter()
            runs = spill.finish(single=True)
            finished = time.perf_counter()
            write_edge_stream(out, about, spill.count, edge_columns(runs, budget,
                                                                    about.layout))
            written = time.perf_counter()
    print(f"{count} pairs, --memory {args.memory:g}: add {added - start:.1f} s, finish "
          f"{finished - added:.1f} s, write {written - finished:.1f} s, "
          f"{out.stat().st_size / 1e9:.2f} GB")
    out.unlink()


if __name__ == "__main__":
    main()
