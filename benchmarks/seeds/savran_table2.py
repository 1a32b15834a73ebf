"""Savran et al.'s Table 2 on the machine it runs on: every pair's SeqDist distance of
6,144 and 8,192 reads of 400 bp (benchmarks/communities.py), `seqpairs distance
--condensed` as a whole command on 1, 2, 4, 8 and 16 CPU cores and on the GPU:

    python benchmarks/seeds/savran_table2.py [--sizes 6144 8192] [--threads 16 8 4 2 1]
                                             [--gpu] [--most-seconds 540]

Rows run in the order given (the GPU first); a row whose time, estimated from the CPU
rate measured so far (cells per second per thread), would pass --most-seconds is not
run and says so, so that one device call holds the others (the one-core rows of 8,192
reads take about an hour: they wait for a longer run).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import community, distance, header, write_fasta  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6144, 8192])
    parser.add_argument("--threads", type=int, nargs="*", default=[16, 8, 4, 2, 1])
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--most-seconds", type=float, default=540.0)
    args = parser.parse_args()
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
                guess = cells / (per_thread * threads) if backend == "cpu" and per_thread \
                    else 0
                if guess > args.most_seconds:
                    rows.append((label, None, f"not run: about {guess:.0f} s at the rate "
                                 "measured here (waits for a longer run)"))
                    continue
                seconds, _ = distance(fasta, backend, "--condensed", str(Path(tmp) / "d.npy"),
                                      threads=threads)
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

if __name__ == "__main__":
    main()
