"""Savran et al.'s Table 2 on the machine it runs on: every pair's SeqDist distance of
6,144 and 8,192 reads of 400 bp (benchmarks/communities.py), `seqpairs distance
--condensed` as a whole command on 1, 2, 4, 8 and 16 CPU cores and on the GPU:

    python benchmarks/seeds/savran_table2.py [--sizes 6144 8192] [--threads 16 8 4 2 1]
                                             [--gpu] [--most-seconds 540]

Rows run in the order given (the GPU first); a row whose time, estimated from the CPU
rate measured so far (cells per second per thread), would pass --most-seconds is not
run and says so, so that one device call holds the others (the one-core rows of 8,192
reads take about an hour: they wait for a longer run).

--at-once C: each CPU row on T cores runs as C / T shards of the pairs at once, each a
whole `seqpairs distance --shard K/N --edges ... --max-distance inf` (every pair's
distance, by the CPU kernel that --condensed uses) on its own T of the machine's first C
cores (sched_setaffinity). The row's time is the sum of the shards' times less all but
one start-up (the start-up: a run on 8 reads), as if one process had done their work on
T cores one shard after another; the shards share the memory bandwidth, caches and
clock of a busy machine, which a lone run would not. So the rows of a 16-core machine
take about the 16-core row's time each, where the one-core row alone takes an hour.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import community, distance, distance_command, header, write_fasta  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6144, 8192])
    parser.add_argument("--threads", type=int, nargs="*", default=[16, 8, 4, 2, 1])
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--most-seconds", type=float, default=540.0)
    parser.add_argument("--at-once", type=int, metavar="CORES",
                        help="each CPU row as CORES / threads shards at once (above)")
    args = parser.parse_args()
    if args.at_once and any(args.at_once % t for t in args.threads):
        raise SystemExit("--at-once: give a multiple of every --threads")
    header("Savran et al.'s Table 2 (benchmarks/seeds/savran_table2.py)")
    print("sequences\tpairs\tbackend\tthreads\tseconds\tGCUPS\tspeed-up over 1 core")
    per_thread = None  # cells per second per thread, the best CPU rate so far
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            fasta = Path(tmp) / f"community_{n}.fasta"
            reads = community(n)
            write_fasta(fasta, reads)
            lengths = [len(seq) for seq, _ in reads]
            cells = (sum(lengths) ** 2 - sum(x * x for x in lengths)) / 2
            runs = ([("gpu", None)] if args.gpu else []) + [("cpu", t) for t in args.threads]
            rows = []  # (label, seconds or None, what)
            for backend, threads in runs:
                label = f"{n}\t{n * (n - 1) // 2}\t{backend}\t{threads or '-'}"
                shards = args.at_once // threads if backend == "cpu" and args.at_once else 1
                guess = cells / (per_thread * threads * shards) if backend == "cpu" and \
                    per_thread else 0
                if guess > args.most_seconds:
                    rows.append((label, None, f"not run: about {guess:.0f} s at the rate "
                                 "measured here (waits for a longer run)"))
                    continue
                if backend == "cpu" and args.at_once:
                    seconds = at_once(fasta, Path(tmp), threads, shards)
                else:
                    seconds, _ = distance(fasta, backend, "--condensed",
                                          str(Path(tmp) / "d.npy"), threads=threads)
                if backend == "cpu":
                    per_thread = max(per_thread or 0, cells / seconds / threads)
                rows.append((label, seconds, f"{cells / seconds / 1e9:.2f}"))
                print(f"# {label}\t{seconds:.1f}", flush=True)
            one_core = next((s for label, s, _ in rows if label.endswith("cpu\t1") and s), None)
            for label, seconds, what in rows:
                if seconds is None:
                    print(f"{label}\t-\t{what}")
                else:
                    ratio = f"{one_core / seconds:.1f}" if one_core else "-"
                    print(f"{label}\t{seconds:.1f}\t{what}\t{ratio}", flush=True)


def at_once(fasta: Path, folder: Path, threads: int, shards: int) -> float:
    """The time on `threads` cores of all pairs of `fasta`, from `shards` shards run at
    once, shard k on cores k x threads .. (k + 1) x threads - 1 (module doc)."""
    def command(path: Path, shard: int, count: int) -> list[str]:
        return distance_command(path, "cpu", "--shard", f"{shard}/{count}", "--edges",
                                str(folder / f"shard{shard}.npz"), "--max-distance", "inf",
                                threads=threads, quiet=True)

    def pinned(shard: int):
        cores = set(range(shard * threads, (shard + 1) * threads))
        return lambda: os.sched_setaffinity(0, cores)

    tiny = folder / "tiny.fasta"
    with open(fasta) as fh:
        tiny.write_text("".join(next(fh) for _ in range(16)))  # 8 reads (2 lines each)
    start = time.perf_counter()
    subprocess.run(command(tiny, 0, 1), check=True, preexec_fn=pinned(0))
    start_up = time.perf_counter() - start
    runs, began = [], time.perf_counter()
    for shard in range(shards):
        runs.append(subprocess.Popen(command(fasta, shard, shards), preexec_fn=pinned(shard)))
    ended = [None] * shards
    while None in ended:
        for k, run in enumerate(runs):
            if ended[k] is None and run.poll() is not None:
                if run.returncode:
                    for other in runs:  # none left running behind the error
                        other.kill()
                    raise SystemExit(f"shard {k}/{shards} failed: {' '.join(run.args)}")
                ended[k] = time.perf_counter() - began
        time.sleep(0.05)
    print(f"# {threads} cores: {shards} shards at once, {min(ended):.1f}-{max(ended):.1f} s "
          f"each, start-up {start_up:.1f} s", flush=True)
    return sum(ended) - (shards - 1) * start_up


if __name__ == "__main__":
    main()
