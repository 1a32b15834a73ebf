"""Check and time the PSSE score engine: local alignment of each query against its target
and against shuffles of the target.

    python benchmarks/bench_psse.py [--pairs 2000] [--shuffles 1000] [--lengths 250 400]
                                    [--schemes dna blosum62] [--sweep-strips 16 24 32 ...]
    python benchmarks/bench_psse.py --backend cpu [--threads 1 2]

The issue's workload, one scheme per command:
    python benchmarks/bench_psse.py --pairs 10000 --shuffles 1000 --length 250 --schemes dna

Pairs: a random query of the given length (ACGT, or the 20 amino acids) and its target, a
copy with 15% of the letters substituted (related pairs, so real alignments are long).
Schemes: dna = match 2, mismatch -3, gaps 5 + 2k; blosum62 = BLOSUM62, gaps 11 + 1k.
GPU (default): for each scheme and length the GPU engine is first checked against the CPU
engine on --check-pairs pairs with 64 shuffles (exit on any difference), then timed on all
pairs: one local_scores call (upload, kernels, download), best of --repeats.
GCUPS = sum over pairs of len(query) * len(target) * (shuffles + 1) / seconds / 1e9.
CPU (--backend cpu): the Numba engine on a small problem (default 16 pairs x 63 shuffles)
for each --threads count; prints GCUPS and GCUPS per thread.
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time

import numpy as np

from seqpairs.backends.cpu import local as cpu_local
from seqpairs.backends.gpu import local as gpu_local
from seqpairs.backends.gpu.kernels import VARIANTS
from seqpairs.scoring import LocalScheme

SCHEMES = {
    "dna": (LocalScheme.dna(2, -3, 5, 2), 4),
    "blosum62": (LocalScheme.from_matrix("BLOSUM62", 11, 1), 20),
}
# The PSSE kernel variants (16-bit lanes with a word or an int8 profile, 32-bit lanes).
LOCAL_VARIANTS = {"16-bit word": "local_16_word", "16-bit int8": "local_16_int8",
                  "32-bit word": "local_32"}
CHECK_SHUFFLES = 64


def related_pairs(rng, letters: int, pairs: int, length: int):
    queries = rng.integers(0, letters, (pairs, length)).astype(np.uint8)
    targets = queries.copy()
    hit = rng.random(targets.shape) < 0.15
    targets[hit] = rng.integers(0, letters, hit.sum())
    return list(queries), list(targets)


def each(count: int):
    """local_scores' pairs and target keys for pair k = (query k, target k)."""
    return np.column_stack([np.arange(count)] * 2), np.arange(count)


def timed(call, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def cells(queries, targets, shuffles: int) -> float:
    return float(sum(len(q) * len(t) for q, t in zip(queries, targets))) * (shuffles + 1)


def check(scheme, queries, targets) -> None:
    want = cpu_local.local_scores(scheme, queries, targets, *each(len(queries)), CHECK_SHUFFLES, 1)
    got = gpu_local.local_scores(scheme, queries, targets, *each(len(queries)), CHECK_SHUFFLES, 1)
    if not all(np.array_equal(g, w) for g, w in zip(got, want)):
        sys.exit("GPU scores differ from the CPU engine")


def kernel_path(scheme, length: int) -> str:
    letters = len(scheme.alphabet)
    if not gpu_local.fits_16_bits(scheme, length, length):
        return "32-bit lanes, word profile"
    word = (letters + 1) ** 2 <= gpu_local.WORD_PROFILE_MAX
    return f"16-bit lanes, {'word' if word else 'int8'} profile"


def gpu_table(args, rng) -> None:
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    variants = {label: VARIANTS[name] for label, name in LOCAL_VARIANTS.items()}
    strips = ", ".join(f"{label} {v.defines['STRIP']}" for label, v in variants.items())
    blocks = {v.defines["BLOCK"] for v in variants.values()}
    registers = {v.max_registers for v in variants.values()}
    print(f"# {props['name'].decode()}, {datetime.date.today()}, PSSE engine, strips "
          f"({strips}), block {'/'.join(map(str, sorted(blocks)))}, max registers "
          f"{'/'.join(map(str, sorted(registers)))}")
    if args.sweep_strips:
        sweep(args, rng)
    print("scheme\tlength\tpairs\tshuffles\tkernel\tseconds\tGCUPS\talignments_per_s")
    for name in args.schemes:
        scheme, letters = SCHEMES[name]
        for length in args.lengths:
            queries, targets = related_pairs(rng, letters, args.pairs, length)
            check(scheme, queries[:args.check_pairs], targets[:args.check_pairs])
            pairs = each(args.pairs)
            seconds = timed(lambda: gpu_local.local_scores(scheme, queries, targets, *pairs,
                                                           args.shuffles, 1), args.repeats)
            work = cells(queries, targets, args.shuffles)
            print(f"{name}\t{length}\t{args.pairs}\t{args.shuffles}\t{kernel_path(scheme, length)}"
                  f"\t{seconds:.2f}\t{work / seconds / 1e9:.0f}"
                  f"\t{args.pairs * (args.shuffles + 1) / seconds:.3e}", flush=True)


def sweep(args, rng) -> None:
    """GCUPS of each strip width x register cap, on a tenth of the pairs at the first length."""
    pairs = max(1, args.pairs // 10)
    for name in args.schemes:
        scheme, letters = SCHEMES[name]
        queries, targets = related_pairs(rng, letters, pairs, args.lengths[0])
        everything = each(pairs)
        for strip in args.sweep_strips:
            if strip % 16 and kernel_path(scheme, args.lengths[0]).endswith("int8 profile"):
                print(f"sweep {name}: strip {strip} skipped (the int8 profile needs multiples "
                      "of 16)")
                continue
            for registers in args.sweep_registers:
                options = dict(strip=strip, max_registers=registers or None)
                gpu_local.local_scores(scheme, queries[:8], targets[:8], *each(8), 8, 1, **options)
                seconds = timed(lambda: gpu_local.local_scores(
                    scheme, queries, targets, *everything, args.shuffles, 1, **options), 1)
                print(f"sweep {name} {args.lengths[0]} bp, strip {strip}, registers "
                      f"{registers or 'free'}: "
                      f"{cells(queries, targets, args.shuffles) / seconds / 1e9:.0f} GCUPS",
                      flush=True)


def cpu_table(args, rng) -> None:
    import numba

    print(f"# CPU engine (Numba), {datetime.date.today()}, {numba.config.NUMBA_NUM_THREADS} "
          f"threads available")
    print("scheme\tlength\tpairs\tshuffles\tthreads\tseconds\tGCUPS\tGCUPS_per_thread")
    for name in args.schemes:
        scheme, letters = SCHEMES[name]
        for length in args.lengths:
            queries, targets = related_pairs(rng, letters, args.pairs, length)
            pairs = each(args.pairs)
            cpu_local.local_scores(scheme, queries[:1], targets[:1], *each(1), 1, 1)  # compile
            work = cells(queries, targets, args.shuffles)
            for threads in args.threads:
                seconds = timed(lambda: cpu_local.local_scores(
                    scheme, queries, targets, *pairs, args.shuffles, 1, threads), args.repeats)
                gcups = work / seconds / 1e9
                print(f"{name}\t{length}\t{args.pairs}\t{args.shuffles}\t{threads}\t"
                      f"{seconds:.2f}\t{gcups:.3f}\t{gcups / threads:.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--pairs", type=int, help="default: 2000 (gpu), 16 (cpu)")
    parser.add_argument("--shuffles", type=int, help="default: 1000 (gpu), 63 (cpu)")
    parser.add_argument("--lengths", "--length", type=int, nargs="+", default=[250, 400])
    parser.add_argument("--schemes", nargs="+", choices=list(SCHEMES), default=list(SCHEMES))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--check-pairs", type=int, default=16,
                        help="pairs checked against the CPU engine before timing (gpu)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="cpu threads")
    parser.add_argument("--sweep-strips", type=int, nargs="*", default=[],
                        help="strip widths to compare before the table (gpu)")
    parser.add_argument("--sweep-registers", type=int, nargs="*", default=[128, 0],
                        help="register caps for --sweep-strips (0: the compiler's choice)")
    args = parser.parse_args()
    cpu = args.backend == "cpu"
    args.pairs = args.pairs or (16 if cpu else 2000)
    args.shuffles = args.shuffles if args.shuffles is not None else (63 if cpu else 1000)
    rng = np.random.default_rng(2026)
    (cpu_table if cpu else gpu_table)(args, rng)


if __name__ == "__main__":
    main()
