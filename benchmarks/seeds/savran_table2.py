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

--shards N --run K-M (with --at-once): a row too long for one call, in N shards over
several calls or sessions. The shards named run, C / T at a time, each on its own T
cores; each one's line (seconds, its call's start-up, its edge list's digest) goes to
ledgers/table2-SIZE-on-T-cores-in-N-shards.tsv. --report prints every row whose N
shards are all there: the shards' seconds less their start-ups, plus one, and the sum
of their digests, the digest of every pair's distance (the same for every row of a
size: tests/test_seeds.py checks that shards add up to the whole at a small size).
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
from common import (  # noqa: E402
    LEDGERS,
    community,
    distance,
    distance_command,
    edge_digest,
    header,
    ledger_digest,
    read_ledger,
    shard_numbers,
    write_fasta,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6144, 8192])
    parser.add_argument("--threads", type=int, nargs="*", default=[16, 8, 4, 2, 1])
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--most-seconds", type=float, default=540.0)
    parser.add_argument("--at-once", type=int, metavar="CORES",
                        help="each CPU row as CORES / threads shards at once (above)")
    parser.add_argument("--shards", type=int, help="a CPU row in this many shards (above)")
    parser.add_argument("--run", nargs="*", default=[],
                        help="with --shards: the shards to run now, numbers or ranges (0-15)")
    parser.add_argument("--report", action="store_true",
                        help="the rows whose shards are all in the ledgers")
    parser.add_argument("--ledgers", type=Path, default=LEDGERS)
    args = parser.parse_args()
    if args.at_once and any(args.at_once % t for t in args.threads):
        raise SystemExit("--at-once: give a multiple of every --threads")
    if args.report:  # the machine that ran the shards is in RESULTS.md, not this one
        print(f"# Savran et al.'s Table 2 from the ledgers in {args.ledgers}")
        report(args.ledgers)
        return
    header("Savran et al.'s Table 2 (benchmarks/seeds/savran_table2.py)")
    if args.shards:
        if not args.at_once:
            raise SystemExit("--shards: give --at-once CORES too")
        with tempfile.TemporaryDirectory() as tmp:
            for n in args.sizes:
                fasta = Path(tmp) / f"community_{n}.fasta"
                write_fasta(fasta, community(n))
                for threads in args.threads:
                    run_shards(fasta, n, threads, args.at_once, args.shards,
                               shard_numbers(args.run), Path(tmp), args.ledgers)
        return
    print("sequences\tpairs\tbackend\tthreads\tseconds\tGCUPS\tspeed-up over 1 core")
    per_thread = None  # cells per second per thread, the best CPU rate so far
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            fasta = Path(tmp) / f"community_{n}.fasta"
            reads = community(n)
            write_fasta(fasta, reads)
            cells = all_pairs_cells(reads)
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


def all_pairs_cells(reads) -> float:
    """Cells of every pair of `reads` ((sequence, id) pairs): the sum of la x lb."""
    lengths = [len(seq) for seq, _ in reads]
    return (sum(lengths) ** 2 - sum(x * x for x in lengths)) / 2


def at_once(fasta: Path, folder: Path, threads: int, shards: int) -> float:
    """The time on `threads` cores of all pairs of `fasta`, from `shards` shards run at
    once, shard k on cores k x threads .. (k + 1) x threads - 1 (module doc)."""
    seconds, start_up = in_slots(fasta, folder, threads, shards, shards, list(range(shards)))
    print(f"# {threads} cores: {shards} shards at once, {min(seconds.values()):.1f}-"
          f"{max(seconds.values()):.1f} s each, start-up {start_up:.1f} s", flush=True)
    return sum(seconds.values()) - (shards - 1) * start_up


def in_slots(fasta: Path, folder: Path, threads: int, slots: int, count: int,
             which: list[int], ended=None) -> tuple[dict, float]:
    """Shards `which` of `count` of all pairs of `fasta`, `slots` at a time, each a whole
    command on its own `threads` cores (slot s: cores s x threads ..); their seconds by
    shard, and the start-up (a run on 8 reads). Edge lists: folder/shard{k}.npz;
    ended(shard, seconds, start-up) is called as each shard ends."""
    def command(path: Path, shard: int, total: int) -> list[str]:
        return distance_command(path, "cpu", "--shard", f"{shard}/{total}", "--edges",
                                str(folder / f"shard{shard}.npz"), "--max-distance", "inf",
                                threads=threads, quiet=True)

    def pinned(slot: int):
        cores = set(range(slot * threads, (slot + 1) * threads))
        return lambda: os.sched_setaffinity(0, cores)

    tiny = folder / "tiny.fasta"
    with open(fasta) as fh:
        tiny.write_text("".join(next(fh) for _ in range(16)))  # 8 reads (2 lines each)
    start = time.perf_counter()
    subprocess.run(command(tiny, 0, 1), check=True, preexec_fn=pinned(0))
    start_up = time.perf_counter() - start
    todo, running, seconds = list(which), {}, {}  # running: slot -> (shard, run, began)
    while todo or running:
        for slot in range(slots):
            if slot not in running and todo:
                shard = todo.pop(0)
                running[slot] = (shard, subprocess.Popen(command(fasta, shard, count),
                                                         preexec_fn=pinned(slot)),
                                 time.perf_counter())
        for slot, (shard, run, began) in list(running.items()):
            if run.poll() is None:
                continue
            if run.returncode:
                for _, other, _ in running.values():  # none left running behind the error
                    other.kill()
                raise SystemExit(f"shard {shard}/{count} failed: {' '.join(run.args)}")
            seconds[shard] = time.perf_counter() - began
            del running[slot]
            if ended:
                ended(shard, seconds[shard], start_up)
        time.sleep(0.05)
    return seconds, start_up


def ledger(folder: Path, n: int, threads: int, shards: int) -> Path:
    return folder / f"table2-{n}-on-{threads}-cores-in-{shards}-shards.tsv"


def ledger_numbers(path: Path) -> tuple[int, int, int]:
    """(reads, cores, shards) of a ledger's name (ledger())."""
    _, n, _, threads, _, _, shards, _ = path.stem.split("-")
    return int(n), int(threads), int(shards)


def run_shards(fasta: Path, n: int, threads: int, cores: int, shards: int, which: list[int],
               folder: Path, ledgers: Path) -> None:
    """Shards `which` of the row (n reads, `threads` cores), cores / threads at a time;
    a ledger line each as it ends, so that a call cut short keeps the shards it finished
    (module doc)."""
    ledgers.mkdir(parents=True, exist_ok=True)

    def record(shard: int, seconds: float, start_up: float) -> None:
        edges = folder / f"shard{shard}.npz"
        line = f"{shard}\t{seconds:.1f}\t{start_up:.2f}\t{edge_digest(edges):016x}"
        edges.unlink()
        with ledger(ledgers, n, threads, shards).open("a") as out:
            out.write(line + "\n")
        print(f"{n} reads on {threads} cores, shard {shard}/{shards}\t{line}", flush=True)

    in_slots(fasta, folder, threads, cores // threads, shards, which, record)


def report(ledgers: Path) -> None:
    """Every row whose shards are all in a ledger: sequences, pairs, threads, seconds (the
    shards' less their start-ups, plus the largest start-up), GCUPS, digest."""
    print("sequences\tpairs\tbackend\tthreads\tseconds\tGCUPS\tshards\tdigest")
    for path in sorted(ledgers.glob("table2-*-shards.tsv"), key=ledger_numbers):
        n, threads, shards = ledger_numbers(path)
        rows, missing = read_ledger(path, shards)
        if missing:
            print(f"# {path.name}: waiting for shards {missing}")
            continue
        # each shard: its seconds and its call's start-up
        times = [(float(seconds), float(start_up)) for seconds, start_up, _ in rows.values()]
        seconds = sum(s - u for s, u in times) + max(u for _, u in times)
        cells = all_pairs_cells(community(n))
        print(f"{n}\t{n * (n - 1) // 2}\tcpu\t{threads}\t{seconds:.1f}\t"
              f"{cells / seconds / 1e9:.2f}\t{shards}\t{ledger_digest(rows):016x}", flush=True)


if __name__ == "__main__":
    main()
