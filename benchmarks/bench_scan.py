"""SSCA#1's kernels 1 and 2 with `seqpairs scan`'s engine: one query against one long
random DNA target with copies of the query planted in it, SSCA#1's scores.

    python benchmarks/bench_scan.py [--query 4096] [--target 1e8] [--cpu-target 2e6]
                                    [--threads 1 16]

GPU: the engine's rows (scan_rows) alone, then the whole scan, kernel 1 (rows and peaks)
and kernel 2 (starts and alignments of the --top 200 hits) timed apart, checked equal to
the CPU engine's hits and alignments on the first --check letters of the target. CPU: the
same on --cpu-target letters for each --threads count. GCUPS = query letters x target letters / seconds / 1e9 (the blocks'
warm-up rows, computed twice, not counted).
"""
from __future__ import annotations

import argparse
import datetime
import time

import numpy as np

from seqpairs.backends import select
from seqpairs.backends.common import concatenate
from seqpairs.pairs import scan
from seqpairs.scoring import LocalScheme

SCHEME = LocalScheme.dna(5, -3, 8, 1)


def data(query_length: int, target_length: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    query = rng.integers(0, 4, query_length, dtype=np.uint8)
    target = rng.integers(0, 4, target_length, dtype=np.uint8)
    for at in rng.integers(0, target_length - query_length, 300):
        copy = query.copy()
        hit = rng.random(query_length) < 0.1
        copy[hit] = rng.integers(0, 4, hit.sum())
        target[at:at + query_length] = copy
    return query, target


def timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", type=int, default=4096)
    parser.add_argument("--target", type=float, default=1e8)
    parser.add_argument("--cpu-target", type=float, default=2e6)
    parser.add_argument("--check", type=float, default=2e6)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 16],
                        help="CPU thread counts to time (none: the GPU alone)")
    parser.add_argument("--top", type=int, default=200)
    parser.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--block-rows", type=int, nargs="+", default=[0],
                        help="rows a block reports, for the GPU rows (0: the engine's, whole "
                        "waves of the GPU's slots)")
    parser.add_argument("--sweep", nargs="*", default=[],
                        help="COLS:SCAN_WARPS pairs to time the GPU rows with")
    args = parser.parse_args()
    query, target = data(args.query, int(args.target))
    cells = lambda n: args.query * n / 1e9  # noqa: E731
    print(f"# {datetime.date.today()}, query {args.query}, SSCA#1 scores, top {args.top}")
    print("run\ttarget_letters\tseconds\tGCUPS")
    if args.gpu:
        import cupy

        from seqpairs.backends.gpu import scan as gpu_scan

        print(f"# {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
        gpu = select("gpu")
        small = int(args.check)
        want = scan.scan(select("cpu"), SCHEME, [query], [target[:small]], args.top,
                         trace=True)
        got = scan.scan(gpu, SCHEME, [query], [target[:small]], args.top, trace=True)
        for field in ("score", "qstart", "qend", "tstart", "tend"):
            if not np.array_equal(getattr(want, field), getattr(got, field)):
                raise SystemExit(f"GPU and CPU hits differ ({field})")
        if not np.array_equal(want.runs.ops, got.runs.ops) or \
                not np.array_equal(want.runs.lengths, got.runs.lengths):
            raise SystemExit("GPU and CPU alignments differ")
        for block_rows in args.block_rows:
            blocks = scan.plan_blocks([args.query], [len(target)], SCHEME, None,
                                      block_rows or None, scan.slots(gpu, SCHEME, [query]),
                                      scan.per_call(gpu))
            inputs = (*concatenate([query]), *concatenate([target]), blocks, SCHEME)

            def time_rows(label, **tuning):
                def rows():
                    keys = gpu_scan.rows(*inputs, **tuning)
                    cupy.cuda.Device().synchronize()
                    return keys

                rows()  # compile
                seconds, _ = timed(rows)
                print(f"gpu rows (kernel 1's scan), {label}\t{len(target)}\t{seconds:.2f}\t"
                      f"{cells(len(target)) / seconds:.0f}", flush=True)

            time_rows(f"{len(blocks['lo'])} blocks")
            for pair in args.sweep:
                columns, warps = map(int, pair.split(":"))
                time_rows(f"COLS {columns}, {warps} warps", cols=columns, scan_warps=warps)
        kernels(gpu, "gpu", query, target, args.top, cells)
    cpu_target = target[:int(args.cpu_target)]
    scan.scan(select("cpu"), SCHEME, [query[:50]], [cpu_target[:5000]], 5, trace=True)
    for threads in args.threads:
        kernels(select("cpu"), f"cpu, {threads} threads", query, cpu_target, args.top, cells,
                threads)


def kernels(backend, label, query, target, top, cells, threads=None):
    """The whole scan timed by kernel: 1 (rows and peaks) and 2 (the hits' starts and
    alignments, of the --top best)."""
    blocks = scan.plan(SCHEME, [query], [target], None, None, top, 1,
                       scan.slots(backend, SCHEME, [query], threads), scan.per_call(backend))
    first, found = timed(lambda: scan.block_peaks(backend, SCHEME, [query], [target], blocks,
                                                  top, 1, threads))
    second, hits = timed(lambda: scan.hits(backend, SCHEME, [query], [target], blocks, *found,
                                           top, threads, trace=True))
    print(f"{label}: kernel 1 (rows, peaks)\t{len(target)}\t{first:.3f}\t"
          f"{cells(len(target)) / first:.2f}", flush=True)
    print(f"{label}: kernel 2 ({len(hits.score)} hits, starts, alignments; "
          f"{second / first:.1%} of kernel 1)\t{len(target)}\t{second:.3f}\t", flush=True)


if __name__ == "__main__":
    main()
