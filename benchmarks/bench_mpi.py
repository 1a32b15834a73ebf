"""MPI scaling of the distance stage. Run it under MPI, once per rank count:

    mpiexec -n P python benchmarks/bench_mpi.py [--log2n 15] [--sd 0] [--backend auto]
                                                [--split pull|share|naive]

2^N sequences of mean length 400 (normal lengths with --sd > 0, as Savran et al.'s
table 4, else families of exactly 400 bp +- a few deletions). Every rank computes its
tiles (GPU by node-local rank) and times them; rank 0 prints the wall time, each rank's
time and the utilisation sum(rank times) / (P * max rank time). Parallel efficiency
against one GPU is T1 / (P * TP) from two such runs. --split: how the tiles are split,
`pull` as `seqpairs distance` does (work lists handed out on request, largest first),
`share` (longest processing time first, decided before any work: Savran et al.'s
improved scheme) or `naive` (the tiles in order cut into runs of equal pair counts, one
a rank: the paper's naive split, at the granularity of tiles).

--dense: every pair's SeqDist distance, as AmpliconNoise's full matrix (Savran et al.'s
headline, 2^18 x 400 bp: issue 21), each rank's folded into an order-free digest as it
comes (seeds/common.DenseDigest) instead of a matrix no machine holds; rank 0 prints the
digest of all ranks', the same for any rank count. --shard K/N computes only shard K of
N of the tiles (split as `seqpairs distance --shard` splits them), so that a run longer
than one call is several: the shards' digests and times add up to the whole run's.
--ledger FILE appends each shard's line (shard, ranks, wall, rank times, digest) to FILE,
and --report FILE adds up a ledger's shards once all N are there: the measured wall time
of the whole problem on that many ranks, and its digest (seeds/ledgers/ keeps them).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "seeds"))
from common import DenseDigest  # noqa: E402

from seqpairs import backends, parallel, scoring  # noqa: E402
from seqpairs.formats.fasta import SequenceSet  # noqa: E402
from seqpairs.pairs import distance  # noqa: E402
from seqpairs.pairs import tiling as binning  # noqa: E402
from seqpairs.scoring.alphabet import encode_all as encode  # noqa: E402
from seqpairs.stages.options import shard  # noqa: E402


def sequences(log2n: int, sd: float, seed: int = 2026) -> SequenceSet:
    rng = np.random.default_rng(seed)
    n = 2**log2n
    root = rng.integers(0, 4, 2000)
    lengths = np.clip(rng.normal(400, sd, n).round().astype(int), 50, 2000) if sd else \
        np.full(n, 400)
    seqs = []
    for k in range(n):
        s = root[:lengths[k]].copy()
        hit = rng.random(lengths[k]) < 0.03
        s[hit] = rng.integers(0, 4, hit.sum())
        seqs.append("".join("ACTG"[c] for c in s))
    codes, offsets = encode(seqs)
    return SequenceSet([f"s{k}" for k in range(n)], seqs, np.ones(n, dtype=np.int64), codes,
                       offsets)


def naive(pairs: np.ndarray, rank: int, ranks: int) -> np.ndarray:
    """The tiles of `rank` when the tiles in order are cut into `ranks` runs of equal pair
    counts: those whose middle pair falls in its run."""
    middle = np.cumsum(pairs) - pairs / 2
    return np.flatnonzero((middle * ranks // pairs.sum()).astype(np.int64) == rank)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=15)
    parser.add_argument("--sd", type=float, default=0.0, help="sd of the lengths (0: 400 bp)")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--dense", action="store_true",
                        help="every pair's distance, folded into a digest")
    parser.add_argument("--split", choices=("pull", "share", "naive"), default="pull")
    parser.add_argument("--shard", type=shard, default=(0, 1), metavar="K/N",
                        help="only shard K of N of the tiles")
    parser.add_argument("--ledger", type=Path, help="append this shard's line to this TSV")
    parser.add_argument("--report", type=Path, metavar="LEDGER",
                        help="add up the shards of a ledger (no run)")
    args = parser.parse_args()
    if args.report:
        return report(args.report)
    w = parallel.current()
    seqs = sequences(args.log2n, args.sd)
    bins = binning.make_bins(seqs.lengths, binning.BIN_WIDTH)
    tiles = binning.make_tiles(seqs.lengths, bins, binning.TILE_PAIRS)
    tiles = parallel.shard_tiles(tiles, *args.shard)
    if args.split == "pull":
        mine, work = tiles, w.pull(tiles["cells"])
    else:
        mine, work = tiles[w.share(tiles["cells"]) if args.split == "share"
                                else naive(tiles["pairs"], w.rank, w.size)], None
    backend = backends.select(args.backend, w.device)
    scheme = scoring.get("seqdist")
    digest = DenseDigest()
    options = {"edges": False, "dense_sink": digest} if args.dense else \
        {"max_distance": 0.3, "candidate_identity": 0.97}
    warm_up = {**options, "dense_sink": DenseDigest()} if args.dense else options
    distance.compute(seqs, bins, tiles[:1], backend=backend, scheme=scheme, **warm_up)
    w.barrier()
    start = time.perf_counter()
    distance.compute(seqs, bins, mine, backend=backend, scheme=scheme, work=work, **options)
    own = time.perf_counter() - start
    gathered = w.gather(np.array([w.rank]), (np.array([own]), np.array([digest.digest],
                                                                        np.uint64)))
    w.barrier()
    wall = time.perf_counter() - start
    if w.root:
        times, digests = gathered
        dense = f", dense digest {int(digests.sum(dtype=np.uint64)):016x}" if args.dense else ""
        print(f"ranks {w.size}, split {args.split}, shard {args.shard[0]}/{args.shard[1]}, "
              f"2^{args.log2n} sequences, length sd {args.sd}: wall {wall:.1f} s, "
              f"rank times {np.round(times, 1).tolist()}, "
              f"utilisation {times.sum() / (w.size * times.max()):.3f}, "
              f"{int(tiles['cells'].sum()) / wall / 1e9:.1f} GCUPS{dense}")
        if args.ledger:
            with open(args.ledger, "a") as ledger:
                ledger.write("\t".join(map(str, (
                    args.log2n, args.dense, args.sd, *args.shard, w.size, f"{wall:.1f}",
                    ",".join(f"{t:.1f}" for t in times), int(tiles["cells"].sum()),
                    f"{int(digests.sum(dtype=np.uint64)):016x}"))) + "\n")


LEDGER_FIELDS = ("log2n", "dense", "sd", "shard", "shards", "ranks", "wall", "rank_times",
                 "cells", "digest")


def report(path: Path) -> None:
    """The whole problem from a ledger's shards (the last line of each shard counts)."""
    rows = {}
    for line in path.read_text().splitlines():
        row = dict(zip(LEDGER_FIELDS, line.split("\t")))
        rows[int(row["shard"])] = row
    if not rows:
        raise SystemExit(f"{path}: no shard measured yet")
    first = next(iter(rows.values()))
    shards = int(first["shards"])
    if {(r["log2n"], r["dense"], r["sd"], r["shards"], r["ranks"]) for r in rows.values()} \
            != {(first["log2n"], first["dense"], first["sd"], first["shards"], first["ranks"])}:
        raise SystemExit(f"{path}: shards of different problems or rank counts")
    missing = sorted(set(range(shards)) - set(rows))
    wall = sum(float(r["wall"]) for r in rows.values())
    cells = sum(int(r["cells"]) for r in rows.values())
    digest = sum(int(r["digest"], 16) for r in rows.values()) % 2**64
    what = f"2^{first['log2n']}, dense {first['dense']}, sd {first['sd']}, {first['ranks']} ranks"
    if missing:
        print(f"{what}: {len(rows)} of {shards} shards measured ({wall:.1f} s), waiting for "
              f"{missing}")
        return
    print(f"{what}, {shards} shards each measured: wall {wall:.1f} s ({wall / 60:.1f} min), "
          f"{cells / wall / 1e9:.1f} GCUPS, dense digest {digest:016x}")


if __name__ == "__main__":
    main()
