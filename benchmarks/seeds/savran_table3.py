"""Savran et al.'s Table 3 on one GPU: all pairs of 2^14 ... 2^18 reads of 400 bp
(benchmarks/communities.py), dense (every pair's SeqDist distance, as the paper computed
them) and at the workflow's default thresholds (the edge list of `seqpairs distance
--max-distance 0.1 --candidate-identity 0.97`), one command per kind of row:

    python benchmarks/seeds/savran_table3.py --dense 14 15 16 --thresholds 14 15 16
    python benchmarks/seeds/savran_table3.py --sharded 18 --shards 16 --run 0 1 2 3
    python benchmarks/seeds/savran_table3.py --sharded 18 --shards 16 --run 4-15 --gpus 4
    python benchmarks/seeds/savran_table3.py --sharded 18 --shards 16 --report
    python benchmarks/seeds/savran_table3.py --check-shards 13 --shards 4

--dense: pairs.distance.compute without an edge list (each pair through the backend's
screen, cost and length all a distance needs), timed in the process after a warm-up.
--thresholds: the whole command. --sharded 2^k: runs too long for one device call are the
N shards of `seqpairs distance --shard K/N`, each a whole command timed on its own, its
seconds, kept pairs and edge_digest appended to OUT/2^k-of-N.tsv (a later session runs
the rest); --report adds them up once every shard is there: the measured time of the
whole problem, and the digest of the whole edge list, which does not depend on the order
the shards are merged in. --check-shards proves that at a size one call holds: the
unsharded run's digest equals the sum of the shards', and `seqpairs merge` of the shards
in two orders gives the unsharded run's bytes.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    LEDGERS,
    THRESHOLDS,
    community,
    distance,
    edge_digest,
    header,
    ledger_digest,
    read_ledger,
    shard_numbers,
    write_fasta,
)


def reads(log2n: int, folder: Path) -> Path:
    fasta = folder / f"community_{log2n}.fasta"
    if not fasta.exists():
        write_fasta(fasta, community(2**log2n))
    return fasta


def pairs(log2n: int) -> int:
    return 2**log2n * (2**log2n - 1) // 2


def dense(log2n: int, source: Path, backend_name: str) -> None:
    from seqpairs import backends, scoring
    from seqpairs.formats.fasta import read_unique_fasta
    from seqpairs.pairs import distance as engine
    from seqpairs.pairs import tiling

    seqs = read_unique_fasta(str(reads(log2n, source)))
    bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
    tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
    backend = backends.select(backend_name)

    def run(part):
        start = time.perf_counter()
        engine.compute(seqs, bins, part, backend=backend, scheme=scoring.get("seqdist"),
                       dense=True, edges=False)
        return time.perf_counter() - start

    run(tiles[:1])  # kernels compiled
    seconds = run(tiles)
    cells = float(tiles["cells"].sum())
    print(f"dense\t2^{log2n}\t{pairs(log2n)}\t{seconds:.1f}\t{cells / seconds / 1e9:.0f} GCUPS",
          flush=True)


def thresholds(log2n: int, source: Path, folder: Path, backend: str) -> None:
    edges = folder / "edges.npz"
    seconds, _ = distance(reads(log2n, source), backend, *THRESHOLDS, "--edges", str(edges))
    with np.load(edges) as z:
        kept = len(z["i"])
    print(f"thresholds\t2^{log2n}\t{pairs(log2n)}\t{seconds:.1f}\t{kept} kept\t"
          f"digest {edge_digest(edges):016x}", flush=True)


def ledger(log2n: int, shards: int) -> Path:
    # no "^" in the name: a device run does not return such files
    return LEDGERS / f"2-to-{log2n}-in-{shards}-shards.tsv"


def run_shards(log2n: int, shards: int, which: list[int], source: Path, folder: Path,
               backend: str, gpus: int, until: float | None) -> None:
    """Shards `which`, `gpus` at a time (a thread per GPU pulling the next), each's edge
    list digested beside the next shard's run and its ledger line written once digested."""
    LEDGERS.mkdir(parents=True, exist_ok=True)
    fasta = reads(log2n, source)
    todo, lock, start, longest = list(which), threading.Lock(), time.perf_counter(), []
    threads = max(1, (os.cpu_count() or gpus) // gpus) if gpus > 1 else None

    def record(k: int, seconds: float, edges: Path) -> None:
        with np.load(edges) as z:
            kept = len(z["i"])
        line = f"{k}\t{seconds:.1f}\t{kept}\t{edge_digest(edges):016x}"
        edges.unlink()
        with lock, ledger(log2n, shards).open("a") as out:
            out.write(line + "\n")
        print(f"shard {k}/{shards} of 2^{log2n}\t{line}", flush=True)

    def gpu(slot: int, digests: ThreadPoolExecutor) -> list:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(slot)} if gpus > 1 else None
        pending = []
        while True:
            with lock:
                ends = time.perf_counter() - start + max(longest, default=0)
                if not todo or (until is not None and ends > until):
                    return pending
                k = todo.pop(0)
            edges = folder / f"shard-{k}.npz"
            seconds, _ = distance(fasta, backend, *THRESHOLDS, "--shard", f"{k}/{shards}",
                                  "--edges", str(edges), threads=threads, env=env)
            longest.append(seconds)
            pending.append(digests.submit(record, k, seconds, edges))

    with ThreadPoolExecutor(gpus) as digests, ThreadPoolExecutor(gpus) as runners:
        for future in [runners.submit(gpu, slot, digests) for slot in range(gpus)]:
            for pending in future.result():
                pending.result()
    if todo:
        print(f"not started (--until {until}): {todo}", flush=True)


def report(log2n: int, shards: int) -> None:
    rows, missing = read_ledger(ledger(log2n, shards), shards)
    if missing:
        print(f"2^{log2n} in {shards} shards: {len(rows)} measured, waiting for {missing}")
        return
    seconds = sum(float(columns[0]) for columns in rows.values())
    kept = sum(int(columns[1]) for columns in rows.values())
    print(f"thresholds, sharded\t2^{log2n}\t{pairs(log2n)}\t{seconds:.1f}\t"
          f"{kept} kept\tdigest {ledger_digest(rows):016x}\t({shards} shards, each measured)")


def check_shards(log2n: int, shards: int, source: Path, folder: Path, backend: str) -> None:
    fasta = reads(log2n, source)
    whole = folder / "whole.npz"
    distance(fasta, backend, *THRESHOLDS, "--edges", str(whole))
    parts = []
    for k in range(shards):
        parts.append(folder / f"part-{k}.npz")
        distance(fasta, backend, *THRESHOLDS, "--shard", f"{k}/{shards}", "--edges",
                 str(parts[-1]))
    total = sum(edge_digest(p) for p in parts) % 2**64
    merged = []
    for order in (parts, random.Random(log2n).sample(parts, len(parts))):
        merged.append(folder / f"merged-{len(merged)}.npz")
        subprocess.run([sys.executable, "-m", "seqpairs", "merge", "--edges", str(merged[-1]),
                        "-i", *map(str, order)], check=True, capture_output=True)
    same = [m.read_bytes() == whole.read_bytes() for m in merged]
    print(f"2^{log2n} in {shards} shards: digest of the whole {edge_digest(whole):016x}, "
          f"sum of the shards' {total:016x}; merges in two orders the same bytes as the "
          f"whole: {same}")
    if total != edge_digest(whole) or not all(same):
        raise SystemExit("the shards do not add up to the whole run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gpu")
    parser.add_argument("--dense", type=int, nargs="*", default=[])
    parser.add_argument("--thresholds", type=int, nargs="*", default=[])
    parser.add_argument("--sharded", type=int, help="log2 of the sharded run's size")
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--run", nargs="*", default=[],
                        help="shards to run now: numbers or ranges (4-15)")
    parser.add_argument("--gpus", type=int, default=1, help="shards run at a time, a GPU each")
    parser.add_argument("--until", type=float,
                        help="start no shard that would end after this many seconds")
    parser.add_argument("--reads", type=Path,
                        help="folder of the reads (community_K.fasta), made if missing")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--check-shards", type=int, help="log2 size of the shards' proof")
    args = parser.parse_args()
    header(f"Savran et al.'s Table 3 (benchmarks/seeds/savran_table3.py), backend {args.backend}")
    print("rows\tsequences\tpairs\tseconds\t...")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = args.reads or folder
        source.mkdir(parents=True, exist_ok=True)
        for log2n in args.dense:
            dense(log2n, source, args.backend)
        for log2n in args.thresholds:
            thresholds(log2n, source, folder, args.backend)
        if args.check_shards:
            check_shards(args.check_shards, args.shards, source, folder, args.backend)
        if args.sharded is not None:
            run_shards(args.sharded, args.shards, shard_numbers(args.run), source, folder,
                       args.backend, args.gpus, args.until)
            if args.report:
                report(args.sharded, args.shards)


if __name__ == "__main__":
    main()
