"""All pairs on the CPU, side by side: seqpairs distance against vsearch and parasail.

    python benchmarks/bench_cpu_peers.py [--fasta FILE | --community K] [--threads 2]
                                         [--runs 5] [--commands NAME ...] [--workdir DIR]

Input: the distinct reads of ../shared/data/C005_454.fa.gz (SEQPAIRS_DATA overrides the
folder), made by `seqpairs ingest` as the workflow makes them (712 reads); --community K:
2^K reads of 400 bp of benchmarks/communities.py instead (where seqpairs' start-up is a
smaller share). Every command gets the same unique.fasta and the same threads, and is
timed as a whole process (start-up included), in turns (each round runs every command
once), so that a drift of the machine's speed touches all alike:

  start-up  the sparse command on the first two reads: Python, the imports, Numba's
            first cache load and one kernel call, what any input costs before its pairs
  sparse    seqpairs distance --max-distance 0.1 --candidate-identity 0.97 --edges
            (the workflow's thresholds)
  dense     seqpairs distance --format seqdist (every pair's distance)
  vsearch   vsearch --allpairs_global --id 0.97 --userout (its own scores: +2/-4, gaps 20/2)
  parasail  every pair's global score and statistics (nw_stats_striped_16, vsearch's
            scores), the pairs cut among --threads processes

Printed per command: the median wall seconds of --runs rounds, its ratio to vsearch's
(paired round by round, median) and GCUPS (cells = sum of len_a * len_b over all pairs).
The script prints each command line, so that any pair can be timed again from outside
(`/usr/bin/time -v`).
"""
from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from communities import community, write_fasta  # noqa: E402

DATA = Path(os.environ.get("SEQPAIRS_DATA", ROOT.parent / "shared" / "data"))
# parasail with vsearch's default scores: match +2, mismatch -4, gap open 20 and extend 2
# (parasail's open is the first gap column's whole cost: vsearch's open + extend)
PARASAIL = """
import sys
from multiprocessing import Pool

import parasail

MATRIX = parasail.matrix_create("ACGT", 2, -4)


def rows(k):
    seqs, count, threads = SEQS, len(SEQS), THREADS
    total = 0
    for i in range(k, count, threads):
        for j in range(i):
            total += parasail.nw_stats_striped_16(seqs[i], seqs[j], 22, 2, MATRIX).score
    return total


SEQS = [line.strip() for line in open(sys.argv[1]) if not line.startswith(">")]
THREADS = int(sys.argv[2])
with Pool(THREADS) as pool:
    print(sum(pool.map(rows, range(THREADS))))
"""


def unique_reads(fasta: Path, work: Path) -> Path:
    """unique.fasta of `fasta` as `seqpairs ingest` writes it."""
    unique = work / "unique.fasta"
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "ingest", "-i", f"C005={fasta}",
                    "-o", unique, "--abundance", work / "abundance.tsv", "--report",
                    work / "report.tsv"], check=True)
    return unique


def first_reads(unique: Path, work: Path, count: int = 2) -> Path:
    """The first `count` records of unique.fasta (one line of sequence each)."""
    head = work / "head.fasta"
    with unique.open() as fh:
        head.write_text("".join(itertools.islice(fh, 2 * count)))
    return head


def cells(unique: Path) -> int:
    lengths = [len(line.strip()) for line in unique.read_text().splitlines()
               if not line.startswith(">")]
    total = sum(lengths)
    return (total * total - sum(n * n for n in lengths)) // 2


def commands(unique: Path, work: Path, threads: int) -> dict[str, list[str]]:
    def seqpairs(fasta):
        return [sys.executable, "-m", "seqpairs", "-q", "distance", "-i", str(fasta),
                "--threads", str(threads)]

    thresholds = ["--max-distance", "0.1", "--candidate-identity", "0.97"]
    script = work / "parasail_all_pairs.py"
    script.write_text(PARASAIL)
    return {
        "start-up": [*seqpairs(first_reads(unique, work)), *thresholds, "--edges",
                     str(work / "head.npz")],
        "sparse": [*seqpairs(unique), *thresholds, "--edges", str(work / "edges.npz")],
        "dense": [*seqpairs(unique), "--format", "seqdist", "-o", str(work / "seqdist.txt")],
        "vsearch": ["vsearch", "--allpairs_global", str(unique), "--id", "0.97", "--threads",
                    str(threads), "--userout", str(work / "vsearch.tsv"), "--userfields",
                    "query+target+id", "--quiet"],
        "parasail": [sys.executable, str(script), str(unique), str(threads)],
    }


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fasta", type=Path, default=DATA / "C005_454.fa.gz")
    parser.add_argument("--community", type=int, metavar="K",
                        help="2^K community reads of 400 bp instead of --fasta's")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", nargs="+", metavar="NAME",
                        help="these of start-up, sparse, dense, vsearch, parasail (default: "
                        "all; vsearch always runs, the ratios' reference)")
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temp dir)")
    args = parser.parse_args()
    if shutil.which("vsearch") is None:
        sys.exit("bench_cpu_peers: vsearch is not installed (apt-get install vsearch)")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.community is None:
            unique = unique_reads(args.fasta, work)
        else:
            unique = work / "unique.fasta"
            write_fasta(unique, community(1 << args.community))
        total_cells = cells(unique)
        runs = commands(unique, work, args.threads)
        if args.commands:
            runs = {name: command for name, command in runs.items()
                    if name in args.commands or name == "vsearch"}
        for name, command in runs.items():
            print(f"# {name}: {' '.join(command)}")
            timed(command)  # warm-up: Numba's cache, the page cache
        seconds = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, command in runs.items():
                seconds[name].append(timed(command))
        reads = sum(1 for line in unique.read_text().splitlines() if line.startswith(">"))
        print(f"{reads} reads, {total_cells:,} cells, {args.threads} threads, {args.runs} rounds")
        print(f"{'command':>10} {'median s':>9} {'min s':>7} {'max s':>7} {'/ vsearch':>10} "
              f"{'GCUPS':>7}")
        for name, times in seconds.items():
            ratio = statistics.median(a / b for a, b in zip(times, seconds["vsearch"]))
            median = statistics.median(times)
            rate = "-" if name == "start-up" else f"{total_cells / median / 1e9:.2f}"
            print(f"{name:>10} {median:>9.2f} {min(times):>7.2f} {max(times):>7.2f} "
                  f"{ratio:>10.2f} {rate:>7}")


if __name__ == "__main__":
    main()
