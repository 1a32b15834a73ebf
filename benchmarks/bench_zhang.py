"""Zhang et al.'s PSSE shapes (issue 18, item 6): single pairs of 200-1,600 aa, and 86
queries x 2,771 subjects of CATH-like proteins, with BLOSUM62 and with the queries' PSSMs.

    python benchmarks/bench_zhang.py [--queries 86] [--subjects 2771] [--shuffles 1000]
                                     [--single 200 400 800 1600] [--cpu-pairs 20]

Proteins: letters drawn from Robinson and Robinson's frequencies (BLAST's BLOSUM62
background); lengths log-normal around CATH domains' (median 150 aa, sigma 0.45, clipped to
40-800). PSSMs: BLOSUM62's row of each query letter plus a random -3..3 per score (clipped
to -10..13, PSI-BLAST's usual range), written in psiblast's ASCII format and read back by
seqpairs like real ones (`--pssm`). Scores: BLOSUM62, gaps 11 + 1k (psse's protein
defaults).

1. single pairs: one local_scores call per length on the GPU (best of 3) and on one CPU
   thread (Numba), the speed-up of one over the other (Zhang's table's shape);
2. the multi-pair set: the engine alone on every pair (one local_scores call per
   STEP_PAIRS, as the stage steps), standard matrix and PSSMs, GCUPS; then the whole
   command, `seqpairs -q psse --backend gpu --queries Q --subjects S` with and without
   --pssm (read, shuffle and align, fit every pair's Gumbel, write the table), wall time,
   after a warm-up run that compiles the kernels; and one CPU thread on --cpu-pairs pairs
   of it, for the speed-up per pair. The GPU rows of those pairs must equal the CPU's.
"""
from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_psse import timed  # benchmarks/ is on the path of a script run from it

from seqpairs.backends.cpu import local as cpu_local
from seqpairs.scoring import LocalScheme
from seqpairs.scoring.alphabet import AMINO_ACIDS

SCHEME = LocalScheme.from_matrix("BLOSUM62", 11, 1)
ROBINSON = dict(A=78.05, C=19.25, D=53.64, E=62.95, F=38.56, G=73.77, H=21.99, I=51.42,
                K=57.44, L=90.19, M=22.43, N=44.87, P=52.03, Q=42.64, R=51.29, S=71.20,
                T=58.41, V=64.41, W=13.30, Y=32.16)
STEP_PAIRS = 1 << 14


def proteins(rng, count: int, prefix: str, length: int | None = None) -> dict[str, str]:
    p = np.array([ROBINSON[c] for c in AMINO_ACIDS])
    p /= p.sum()
    lengths = ([length] * count if length else
               np.clip(rng.lognormal(np.log(150), 0.45, count), 40, 800).astype(int))
    return {f"{prefix}{k}": "".join(rng.choice(list(AMINO_ACIDS), n, p=p))
            for k, n in enumerate(lengths)}


def pssm_text(query: str, rng) -> str:
    """A PSSM of `query` in psiblast's ASCII layout (scores only meaningful)."""
    codes = SCHEME.encode(query, "query")
    scores = SCHEME.matrix()[codes][:, :20] + rng.integers(-3, 4, (len(query), 20))
    scores = np.clip(scores, -10, 13)
    header = " ".join(AMINO_ACIDS)
    lines = ["", "Last position-specific scoring matrix computed, weighted observed "
             "percentages rounded down, information per position, and relative weight of "
             "gapless real matches to pseudocounts", f"           {header}   {header}"]
    for j, (letter, row) in enumerate(zip(query, scores)):
        lines.append(f"{j + 1:5d} {letter}  " + " ".join(f"{s:3d}" for s in row) + "  "
                     + " ".join(["  0"] * 20) + "  0.00 0.00")
    lines += ["", "                      K         Lambda",
              "Standard Ungapped    0.1380     0.3268", "Standard Gapped      0.0410     0.2670",
              "PSI Ungapped         0.1400     0.3200", "PSI Gapped           0.0410     0.2670"]
    return "\n".join(lines) + "\n"


def write_fasta(path: Path, seqs: dict[str, str]) -> Path:
    path.write_text("".join(f">{k}\n{s}\n" for k, s in seqs.items()))
    return path


def single_pairs(args, rng, gpu_local) -> None:
    print("\n## single pairs: one query against one subject and its shuffles")
    print("length\tshuffles\tgpu_s\tgpu_GCUPS\tcpu_1_thread_s\tcpu_GCUPS\tspeedup")
    for length in args.single:
        q = SCHEME.encode(proteins(rng, 1, "q", length)["q0"], "q")
        t = SCHEME.encode(proteins(rng, 1, "t", length)["t0"], "t")
        call = ([q], [t], [(0, 0)], [1], args.shuffles, 1)
        want = cpu_local.local_scores(SCHEME, *call, 1)
        got = gpu_local.local_scores(SCHEME, *call)
        if not all(np.array_equal(a, b) for a, b in zip(got, want)):
            sys.exit(f"GPU and CPU scores differ at {length} aa")
        gpu = timed(lambda: gpu_local.local_scores(SCHEME, *call), 3)
        cpu = timed(lambda: cpu_local.local_scores(SCHEME, *call, 1), 1)
        cells = length * length * (args.shuffles + 1)
        print(f"{length}\t{args.shuffles}\t{gpu:.4f}\t{cells / gpu / 1e9:.0f}\t{cpu:.2f}\t"
              f"{cells / cpu / 1e9:.3f}\t{cpu / gpu:.0f}x", flush=True)


def engine(args, queries, subjects, profiles, gpu_local) -> None:
    q = [SCHEME.encode(s, k) for k, s in queries.items()]
    t = [SCHEME.encode(s, k) for k, s in subjects.items()]
    pairs = np.array([(a, b) for a in range(len(q)) for b in range(len(t))])
    keys = np.arange(len(t))
    cells = float((np.array([len(s) for s in q])[pairs[:, 0]]
                   * np.array([len(s) for s in t])[pairs[:, 1]]).sum()) * (args.shuffles + 1)
    print(f"\n## engine alone: {len(pairs):,} pairs x {args.shuffles} shuffles, {cells:.3g} cells")
    print("scores\tseconds\tGCUPS")
    order = pairs[np.argsort(pairs[:, 1], kind="stable")]  # a subject's pairs together
    for name, table in (("BLOSUM62", None), ("PSSM", profiles)):
        def run():
            for start in range(0, len(order), STEP_PAIRS):
                gpu_local.local_scores(SCHEME, q, t, order[start:start + STEP_PAIRS], keys,
                                       args.shuffles, 1, profiles=table)

        gpu_local.local_scores(SCHEME, q, t, order[:64], keys, 8, 1, profiles=table)  # compile
        seconds = timed(run, 1)
        print(f"{name}\t{seconds:.2f}\t{cells / seconds / 1e9:.0f}", flush=True)


def psse(out: Path, files: dict, shuffles: int, *options) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "seqpairs", "-q", "psse", "--alphabet", "protein",
                    "--queries", str(files["queries"]), "--subjects", str(files["subjects"]),
                    "-o", str(out), "--shuffles", str(shuffles), *map(str, options)], check=True)
    return time.perf_counter() - start


def command(args, folder: Path, files: dict, queries: list[str], subjects: list[str]) -> None:
    pairs = len(queries) * len(subjects)
    print(f"\n## seqpairs psse end to end: {pairs:,} pairs x {args.shuffles} shuffles")
    small = folder / "small.tsv"
    chosen = [(queries[k % len(queries)], subjects[(7 * k) % len(subjects)])
              for k in range(args.cpu_pairs)]
    small.write_text("query\ttarget\n" + "".join(f"{a}\t{b}\n" for a, b in chosen))
    print("scores\tgpu_wall_s\tcpu_1_thread_s_per_pair\tspeedup_per_pair\tcpu_rows_equal")
    for name, extra in (("BLOSUM62", ()), ("PSSM", ("--pssm", files["pssm"]))):
        psse(folder / "warm.tsv", files, 10, "--backend", "gpu", "--pairs", small, *extra)
        gpu = psse(folder / "gpu.tsv", files, args.shuffles, "--backend", "gpu", *extra)
        cpu = psse(folder / "cpu.tsv", files, args.shuffles, "--backend", "cpu", "--threads",
                   "1", "--pairs", small, *extra) / args.cpu_pairs
        cpu_rows = pd.read_csv(folder / "cpu.tsv", sep="\t")
        gpu_rows = pd.read_csv(folder / "gpu.tsv", sep="\t").merge(
            cpu_rows[["query", "target"]], on=["query", "target"])
        columns = ["query", "target", "score", "mu", "beta", "pvalue"]
        same = gpu_rows[columns].sort_values(columns[:2]).reset_index(drop=True).equals(
            cpu_rows[columns].sort_values(columns[:2]).reset_index(drop=True))
        print(f"{name}\t{gpu:.2f}\t{cpu:.3f}\t{cpu / (gpu / pairs):.0f}x\t{same}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=86)
    parser.add_argument("--subjects", type=int, default=2771)
    parser.add_argument("--shuffles", type=int, default=1000)
    parser.add_argument("--single", type=int, nargs="*", default=[200, 400, 800, 1600])
    parser.add_argument("--cpu-pairs", type=int, default=20)
    args = parser.parse_args()
    import cupy

    from seqpairs.backends.gpu import local as gpu_local
    from seqpairs.formats.pssm import read_pssms

    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"# {props['name'].decode()}, {datetime.date.today()}, PSSE, BLOSUM62 11/1")
    rng = np.random.default_rng(2012)
    single_pairs(args, rng, gpu_local)
    queries = proteins(rng, args.queries, "q")
    subjects = proteins(rng, args.subjects, "s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {"queries": write_fasta(folder / "queries.fa", queries),
                 "subjects": write_fasta(folder / "subjects.fa", subjects),
                 "pssm": folder / "pssm"}
        files["pssm"].mkdir()
        for name, seq in queries.items():
            (files["pssm"] / f"{name}.pssm").write_text(pssm_text(seq, rng))
        profiles = read_pssms(files["pssm"], list(queries), list(queries.values()), SCHEME)
        engine(args, queries, subjects, profiles, gpu_local)
        command(args, folder, files, list(queries), list(subjects))


if __name__ == "__main__":
    main()
