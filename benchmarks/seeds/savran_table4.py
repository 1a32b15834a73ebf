"""Savran et al.'s Table 4 as a computation from times measured on one GPU: 2^14 reads
whose lengths are normal with mean 400 and variance 50, 75 or 100 (benchmarks/
bench_mpi.py's sequences: one root, 3% substitutions), split among 2, 4, 8 or 16 ranks
two ways:

    python benchmarks/seeds/savran_table4.py [--log2n 14] [--variance 50 75 100]
                                             [--ranks 2 4 8 16] [--backend gpu]

Every tile of pairs (pairs/tiling.py: pairs of two length bins, 250,000 at most) is
aligned in full on its own and timed, on a second pass over the tiles (every pair, as
Savran et al.'s kernel does: pairs.distance.compute without pruning, keeping none). From
those times:

  naive      the pairs in the tiles' order cut into runs of equal pair counts, one a rank;
             a rank's time is its share of each tile's time (by pairs)
  scheduler  the project's: tiles longest first by their cells, each to the least loaded
             rank (parallel.assign; the pull of `seqpairs distance` under MPI hands
             ranks of equal speed the same order)

utilisation = sum of the ranks' times / (ranks x the longest): 1.0 when all end together.
It is a computation from one GPU's tile times, not a run on several GPUs (those rows are
issue 21's).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mpi import sequences  # noqa: E402
from common import header  # noqa: E402

from seqpairs import backends, parallel, scoring  # noqa: E402
from seqpairs.pairs import distance, tiling  # noqa: E402


def tile_seconds(seqs, bins, tiles, backend) -> np.ndarray:
    """Each tile's time, every pair aligned in full (kept: none), on a second pass over the
    tiles: the first compiles what each tile needs (a first H100 run, 2026-11-26, timed
    the first pass, whose few tiles of several seconds made every split look unbalanced)."""
    def run(part):
        start = time.perf_counter()
        distance.compute(seqs, bins, part, backend=backend, scheme=scoring.get("seqdist"),
                         max_distance=-math.inf, prune=False, eta=False)
        return time.perf_counter() - start

    for k in range(len(tiles)):
        run(tiles[[k]])
    return np.array([run(tiles[[k]]) for k in range(len(tiles))])


def utilisation(loads: np.ndarray) -> float:
    return float(loads.sum() / (len(loads) * loads.max()))


def naive(tiles, seconds, ranks: int) -> np.ndarray:
    """Rank loads of equal pair counts in the tiles' order (a tile's time shared by pairs)."""
    edges = np.r_[0, np.cumsum(tiles["pairs"])].astype(float)
    cuts = np.linspace(0, edges[-1], ranks + 1)
    loads = np.zeros(ranks)
    for r in range(ranks):
        overlap = np.clip(np.minimum(edges[1:], cuts[r + 1]) - np.maximum(edges[:-1], cuts[r]),
                          0, None)
        loads[r] = (seconds * overlap / np.diff(edges)).sum()
    return loads


def scheduled(tiles, seconds, ranks: int) -> np.ndarray:
    owner = parallel.assign(tiles["cells"], ranks)
    return np.bincount(owner, weights=seconds, minlength=ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, default=14)
    parser.add_argument("--variance", type=float, nargs="+", default=[50, 75, 100])
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--backend", default="gpu")
    args = parser.parse_args()
    header(f"Savran et al.'s Table 4, computed from one worker's tile times "
           f"(benchmarks/seeds/savran_table4.py), backend {args.backend}")
    backend = backends.select(args.backend)
    print("variance\ttiles\tmeasured s\tlongest tile s\tranks\tnaive utilisation\t"
          "scheduler utilisation")
    for variance in args.variance:
        seqs = sequences(args.log2n, math.sqrt(variance))
        bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
        tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
        seconds = tile_seconds(seqs, bins, tiles, backend)
        for ranks in args.ranks:
            print(f"{variance:g}\t{len(tiles)}\t{seconds.sum():.1f}\t{seconds.max():.2f}\t"
                  f"{ranks}\t"
                  f"{utilisation(naive(tiles, seconds, ranks)):.3f}\t"
                  f"{utilisation(scheduled(tiles, seconds, ranks)):.3f}", flush=True)


if __name__ == "__main__":
    main()
