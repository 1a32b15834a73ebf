"""Build, check and time the distance kernels (SeqDist, and integer affine with --affine).

    python benchmarks/bench_distance.py [--lengths 250 400 1500] [--cells 6e11] [--affine]
                                        [--e2e 13]

For each length: a family of sequences (a random root mutated at 10%, so alignments
take realistic paths), the GPU kernels are checked bit for bit against the CPU backend on
a sample of pairs, then timed on about --cells cells (best of --repeats). Prints GCUPS
and alignments per second of the screen (cost, length, matches, aligned pairs: what the
distance stage runs on every pair), of the dense kernel (the screen without matches: the
dense outputs') and of the full kernel (all counts: what it runs on the pairs the screen
keeps). With --e2e N, also times `seqpairs distance` end to end on
2^N sequences of 400 bp with sparse output (--max-distance 0.3) and extrapolates to 2^18.
--affine checks and times the integer affine kernel the same way (+2/-4, gaps 20+2,
end gaps 2+1).
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

from seqpairs import backends, scoring
from seqpairs.backends.cpu import affine as cpu_affine
from seqpairs.backends.gpu import affine as gpu_affine
from seqpairs.backends.gpu import seqdist as gpu_seqdist
from seqpairs.backends.gpu.kernels import VARIANTS
from seqpairs.scoring import AffineScheme
from seqpairs.scoring.alphabet import encode_all as encode

SEQDIST = scoring.get("seqdist")


def family(rng, n: int, length: int, rate: float = 0.1) -> list[str]:
    root = rng.integers(0, 4, length)
    seqs = []
    for _ in range(n):
        s = root.copy()
        hit = rng.random(length) < rate
        s[hit] = rng.integers(0, 4, hit.sum())
        drop = rng.random(length) < rate / 10  # a few deletions so lengths differ a little
        seqs.append("".join("ACTG"[c] for c in s[~drop]))
    return seqs


def check(seqs, rng, pairs: int = 2000) -> None:
    codes, offsets = encode(seqs)
    pa, pb = rng.integers(0, len(seqs), (2, pairs))
    want = backends.select("cpu").seqdist(codes, offsets, SEQDIST)(pa, pb)
    got = gpu_seqdist.aligner(codes, offsets, SEQDIST)(pa, pb)
    if not (np.array_equal(got[0].view(np.int64), want[0].view(np.int64))
            and all(np.array_equal(g, w) for g, w in zip(got[1:], want[1:]))):
        sys.exit("GPU results differ from the CPU backend")
    screened = gpu_seqdist.screener(codes, offsets, SEQDIST)(pa, pb)
    if not (np.array_equal(screened[0].view(np.int64), want[0].view(np.int64))
            and all(np.array_equal(g, w) for g, w in zip(screened[1:3], want[1:3]))):
        sys.exit("GPU screen results differ from the CPU backend")
    cost, length = gpu_seqdist.dense_aligner(codes, offsets, SEQDIST)(pa, pb)
    if not (np.array_equal(cost.view(np.int64), want[0].view(np.int64))
            and np.array_equal(length, want[1])):
        sys.exit("GPU dense results differ from the CPU backend")


AFFINE = AffineScheme.dna(2, -4, 20, 2, 2, 1)


def time_kernel(seqs, rng, cells: float, repeats: int, kernel: str = "seqdist", **options):
    """Pairs, cells and best seconds of one kernel; options (strip, rows, max_registers)
    override its defaults."""
    codes, offsets = encode(seqs)
    lengths = np.diff(offsets)
    mean_cells = lengths.mean() ** 2
    n = int(cells / mean_cells)
    pa, pb = rng.integers(0, len(seqs), (2, n))
    work = float((lengths[pa] * lengths[pb]).sum())
    if kernel == "affine":
        options.pop("rows", None)  # the affine kernel has one row in flight
        align = gpu_affine.aligner(codes, offsets, AFFINE, **options)
    else:
        make = {"screen": gpu_seqdist.screener, "dense": gpu_seqdist.dense_aligner,
                "seqdist": gpu_seqdist.aligner}[kernel]
        align = make(codes, offsets, SEQDIST, **options)
    align(pa[:1000], pb[:1000])  # warm-up and compile
    best = min(_timed(align, pa, pb) for _ in range(repeats))
    return n, work, best


def _timed(align, pa, pb) -> float:
    start = time.perf_counter()
    align(pa, pb)
    return time.perf_counter() - start


def affine_table(lengths, rng, cells: float, repeats: int) -> None:
    """The integer affine kernel (vsearch-like scores: +2/-4, gaps 20+2, end gaps 2+1)."""
    scheme = AFFINE
    print("\naffine integer kernel\nlength\tpairs\tseconds\tGCUPS\talignments_per_s")
    for length in lengths:
        seqs = family(rng, 512, length)
        codes, offsets = encode(seqs)
        pa, pb = rng.integers(0, len(seqs), (2, 2000))
        want = cpu_affine.aligner(codes, offsets, scheme)(pa, pb)
        got = gpu_affine.aligner(codes, offsets, scheme)(pa, pb)
        if not all(np.array_equal(g, w) for g, w in zip(got, want)):
            sys.exit("GPU affine results differ from the CPU backend")
        seq_lengths = np.diff(offsets)
        n = int(cells / seq_lengths.mean() ** 2)
        pa, pb = rng.integers(0, len(seqs), (2, n))
        work = float((seq_lengths[pa] * seq_lengths[pb]).sum())
        align = gpu_affine.aligner(codes, offsets, scheme)
        align(pa[:1000], pb[:1000])
        best = min(_timed(align, pa, pb) for _ in range(repeats))
        print(f"{length}\t{n}\t{best:.3f}\t{work / best / 1e9:.1f}\t{n / best:.3e}")


def end_to_end(log2n: int, rng) -> None:
    n = 2**log2n
    seqs = []
    while len(seqs) < n:  # many families of 400 bp
        seqs += family(rng, 256, 400, rate=0.03)
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "in.fasta"
        fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs[:n])))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "seqpairs", "-q", "distance", "-i", str(fasta),
                        "--backend", "gpu", "--max-distance", "0.3",
                        "--edges", str(Path(tmp) / "edges.npz")], check=True)
        seconds = time.perf_counter() - start
        kept = len(np.load(Path(tmp) / "edges.npz")["i"])
    pairs = n * (n - 1) // 2
    big = 2**18 * (2**18 - 1) // 2
    print(f"\nend to end: 2^{log2n} x 400 bp, {pairs:.3e} pairs, {kept} kept, {seconds:.1f} s, "
          f"{pairs / seconds:.3e} alignments/s; 2^18 x 400 bp extrapolated: "
          f"{seconds * big / pairs / 3600:.2f} h")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[250, 400, 1500])
    parser.add_argument("--cells", type=float, default=6e11, help="cells per timing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--e2e", type=int, default=0, help="log2 of sequences for the end-to-end run")
    parser.add_argument("--affine", action="store_true", help="also check and time the affine kernel")
    parser.add_argument("--sweep", type=int, nargs="*", default=[],
                        help="strip widths to compare before the table")
    parser.add_argument("--sweep-lengths", type=int, nargs="+", default=[400],
                        help="sequence lengths of --sweep")
    parser.add_argument("--sweep-kernel", choices=("screen", "dense", "seqdist", "affine"),
                        default="screen",
                        help="the kernel that --sweep compares")
    parser.add_argument("--rows", type=int, nargs="*",
                        default=[VARIANTS["seqdist_screen"].defines["ROWS"]],
                        help="rows in flight per thread for --sweep")
    parser.add_argument("--registers", type=int, nargs="*", default=[0, 128, 168],
                        help="register caps per thread for --sweep (0: the compiler's choice)")
    args = parser.parse_args()
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    screen, full, affine = (VARIANTS[k] for k in ("seqdist_screen", "seqdist", "affine_32"))
    print(f"# {props['name'].decode()}, {datetime.date.today()}; rows {full.defines['ROWS']}; "
          f"strip, max registers: screen {screen.defines['STRIP']}, {screen.max_registers}; "
          f"full SeqDist {full.defines['STRIP']}, {full.max_registers}; "
          f"affine {affine.defines['STRIP']}, {affine.max_registers}")
    print("kernel\tlength\tpairs\tseconds\tGCUPS\talignments_per_s")
    rng = np.random.default_rng(2026)
    for sweep_length in args.sweep_lengths if args.sweep else []:
        seqs = family(rng, 512, sweep_length)
        for strip in args.sweep:
            for rows in args.rows:
                for regs in args.registers:
                    n, work, seconds = time_kernel(seqs, rng, args.cells / 2, 1,
                                                   args.sweep_kernel, strip=strip, rows=rows,
                                                   max_registers=regs or None)
                    print(f"{args.sweep_kernel} strip {strip}, rows {rows}, registers "
                          f"{regs or 'free'}: {sweep_length} bp, "
                          f"{work / seconds / 1e9:.1f} GCUPS", flush=True)
    for length in args.lengths:
        seqs = family(rng, 512, length)
        check(seqs, rng)
        for kernel in ("screen", "dense", "seqdist"):
            n, work, seconds = time_kernel(seqs, rng, args.cells, args.repeats, kernel=kernel)
            print(f"{kernel}\t{length}\t{n}\t{seconds:.3f}\t{work / seconds / 1e9:.1f}\t"
                  f"{n / seconds:.3e}")
    if args.affine:
        affine_table(args.lengths, rng, args.cells * 2, args.repeats)
    if args.e2e:
        end_to_end(args.e2e, rng)


if __name__ == "__main__":
    main()
