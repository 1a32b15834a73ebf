"""Peak host memory of `seqpairs distance` with sparse output, against N.

    python benchmarks/bench_memory.py [--sizes 10000 20000 40000] [--length 20]
                                      [--backend cpu] [--threads T] [--memory MIB]
                                      [--community] [--references K] [--reads R]
                                      [--substitution-rate P] [--keep-all]
                                      [--baseline-src DIR]

For each N: N reads written as FASTA, then `seqpairs distance --edges` run as a child
process; its peak resident set (ru_maxrss from wait4) is printed with the wall time, the
pairs kept and, for scale, the N(N-1)/2 doubles a dense matrix would need and the bytes
the kept pairs take in the edge list.

Reads: by default families of 2,000 references with 3% substitutions (few pairs kept);
with --community, an amplicon community made by `seqpairs simulate` (--references K,
--length, --reads R simulated reads, --substitution-rate P) and `seqpairs ingest`, of
which the N most abundant unique sequences are taken.

Pairs kept: the workflow's thresholds (--max-distance 0.1 --candidate-identity 0.97), or
every pair with --keep-all. --memory is passed on (the budget for the kept pairs; the
stage's default otherwise). With --baseline-src DIR the same command also runs with DIR
on PYTHONPATH (another checkout's src/, e.g. the code before a change); its peak is
printed and the two edge lists' common arrays are compared (they must be equal).

On a GPU: --backend gpu and reads of a real length (e.g. --community --length 250).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FAMILIES = 2000


def write_reads(path: Path, n: int, length: int, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    roots = rng.choice(list("ACGT"), (FAMILIES, length))
    with open(path, "w") as fh:
        for k in range(n):
            s = roots[k % FAMILIES].copy()
            hit = rng.random(length) < 0.03
            s[hit] = rng.choice(list("ACGT"), hit.sum())
            fh.write(f">r{k}\n{''.join(s)}\n")


def write_community(path: Path, n: int, args, folder: Path) -> None:
    """The n most abundant unique reads of a simulated community (simulate + ingest)."""
    seqpairs = [sys.executable, "-m", "seqpairs", "-q"]
    subprocess.run([*seqpairs, "simulate", "-o", folder / "sim", "--references",
                    str(args.references), "--length", str(args.length), "--samples", "1",
                    "--reads", str(args.reads), "--substitution-rate",
                    str(args.substitution_rate)], check=True)
    unique = folder / "unique.fasta"
    subprocess.run([*seqpairs, "ingest", "-i", folder / "sim" / "sample1.fastq.gz", "-o",
                    unique, "--abundance", folder / "abundance.tsv", "--report",
                    folder / "report.tsv"], check=True)
    lines = unique.read_text().splitlines()
    if len(lines) < 2 * n:
        raise SystemExit(f"the community has {len(lines) // 2} unique reads, fewer than {n}: "
                         "raise --reads or --substitution-rate")
    path.write_text("\n".join(lines[:2 * n]) + "\n")


def peak_rss(cmd: list[str], env=None) -> tuple[float, float]:
    """(peak RSS in MiB, wall seconds) of one child process; raises if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed with status {proc.returncode}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start  # ru_maxrss is in KiB


def same_arrays(a: Path, b: Path) -> bool:
    """The arrays both edge lists hold are equal (NaN equal to NaN)."""
    with np.load(a) as x, np.load(b) as y:
        return all(np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f")
                   for k in set(x.files) & set(y.files))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--memory", type=float, default=None,
                        help="MiB for the kept pairs (seqpairs distance --memory)")
    parser.add_argument("--community", action="store_true",
                        help="reads of a simulated amplicon community (simulate + ingest)")
    parser.add_argument("--references", type=int, default=40)
    parser.add_argument("--reads", type=int, default=100_000,
                        help="reads simulated for --community")
    parser.add_argument("--substitution-rate", type=float, default=0.01)
    parser.add_argument("--keep-all", action="store_true",
                        help="keep every pair (the CLI's default) instead of the workflow's "
                        "thresholds")
    parser.add_argument("--baseline-src", type=Path,
                        help="also run with this src/ on PYTHONPATH and compare")
    args = parser.parse_args()
    kind = (f"community of {args.references} references" if args.community
            else f"{FAMILIES} families")
    print(f"backend {args.backend}, reads of {args.length} bp, {kind}, "
          f"{'every pair kept' if args.keep_all else 'workflow thresholds'}, "
          f"--memory {args.memory or 'default'}")
    print(f"{'N':>8} {'pairs':>14} {'kept':>12} {'kept share':>10} {'peak RSS MiB':>13} "
          f"{'baseline MiB':>13} {'dense MiB':>10} {'edges MiB':>10} {'wall s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            fasta, edges = Path(tmp) / f"{n}.fasta", Path(tmp) / f"{n}.npz"
            if args.community:
                write_community(fasta, n, args, Path(tmp))
            else:
                write_reads(fasta, n, args.length)
            cmd = [sys.executable, "-m", "seqpairs", "-q", "distance", "-i", str(fasta),
                   "--backend", args.backend, "--edges", str(edges)]
            if not args.keep_all:
                cmd += ["--max-distance", "0.1", "--candidate-identity", "0.97"]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            if args.memory:
                cmd += ["--memory", str(args.memory)]
            rss, wall = peak_rss(cmd)
            baseline = "-"
            if args.baseline_src:
                old = Path(tmp) / f"{n}.baseline.npz"
                path = [str(args.baseline_src.resolve()), os.environ.get("PYTHONPATH", "")]
                env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
                old_cmd = [word if word != str(edges) else str(old) for word in cmd]
                old_cmd = [w for k, w in enumerate(old_cmd)
                           if not (w == "--memory" or (k and old_cmd[k - 1] == "--memory"))]
                baseline = f"{peak_rss(old_cmd, env)[0]:.0f}"
                if not same_arrays(edges, old):
                    raise SystemExit(f"N={n}: the edge lists' arrays differ from the baseline's")
                old.unlink()
            with np.load(edges) as npz:
                kept = len(npz["i"])
            pairs = n * (n - 1) // 2
            print(f"{n:>8} {pairs:>14,} {kept:>12,} {kept / pairs:>10.4f} {rss:>13.0f} "
                  f"{baseline:>13} {pairs * 8 / 2**20:>10.0f} {edges.stat().st_size / 2**20:>10.0f} "
                  f"{wall:>8.1f}", flush=True)
            edges.unlink()


if __name__ == "__main__":
    main()
