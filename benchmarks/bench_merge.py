"""`seqpairs merge`'s engine on its own: K shard edge lists of N synthetic kept pairs of
2^16 sequences (the pairs dealt to the shards in blocks of keys), merged by
formats.edge_writer.merge_edge_lists within --memory MiB by --threads threads and timed
in the process. The merged file must be the bytes of the whole edge list written at once
(formats.distances.write_edges); the run fails otherwise.

    python benchmarks/bench_merge.py [--pairs 2e7] [--shards 4] [--memory 256]
                                     [--threads T] [--folder /tmp]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from seqpairs.formats.distances import Edges, pair_from_index, write_edges
from seqpairs.formats.edge_writer import merge_edge_lists

SEQUENCES = 1 << 16
BLOCK = 1 << 12  # keys dealt to one shard at a time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=float, default=2e7)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--memory", type=float, default=256, help="MiB, as --memory")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    count, rng = int(args.pairs), np.random.default_rng(1)
    keys = np.sort(rng.choice(SEQUENCES * (SEQUENCES - 1) // 2, count, replace=False))
    i, j = pair_from_index(keys)
    length = rng.integers(390, 420, count).astype(np.int32)
    values = {"cost": rng.random(count) * 40, "length": length, "matches": length - 10,
              "aligned": length - 2, "leading": np.zeros(count, np.int32)}
    whole = Edges(SEQUENCES, np.array([f"s{k}" for k in range(SEQUENCES)]), i, j, values,
                  max_distance=0.1, candidate_identity=0.97, sequences="-")
    shard_of = (np.arange(count) // BLOCK) % args.shards
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        folder = Path(folder)
        write_edges(folder / "whole.npz", whole)
        paths = []
        for k in range(args.shards):
            mine = shard_of == k
            paths.append(folder / f"{k}-of-{args.shards}.npz")
            write_edges(paths[-1], dataclasses.replace(
                whole, i=i[mine], j=j[mine], values={n: v[mine] for n, v in values.items()},
                shard=k, shards=args.shards, tiling="-"))
        budget = int(args.memory * (1 << 20))
        start = time.perf_counter()
        merge_edge_lists(paths, folder / "merged.npz", budget, args.threads)
        seconds = time.perf_counter() - start
        same = (folder / "merged.npz").read_bytes() == (folder / "whole.npz").read_bytes()
        size = (folder / "merged.npz").stat().st_size
    print(f"{count} pairs in {args.shards} shards, --memory {args.memory:g}, "
          f"{args.threads} threads: merge {seconds:.1f} s, "
          f"{size / 1e9:.2f} GB, the whole edge list's bytes: {same}")
    if not same:
        raise SystemExit("the merged edge list differs from the whole one")


if __name__ == "__main__":
    main()
