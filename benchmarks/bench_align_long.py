"""`seqpairs align`'s GPU passes on long pairs: a thread a pair (align_pairs /
align_local_pairs) against a warp a pair (align_long), to place backends/gpu/align.py's
FILL_PAIRS and LONG_FROM. Each pair is a query of L letters against a related target of L letters (the
query with 5% substitutions), local mode, ADEPT's DNA scores; few pairs (one batch of
`--few`) and many (about `--cells` cells), both passes, medians of `--repeats`.

    python benchmarks/bench_align_long.py --lengths 500,1000,2000,4000,8000
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from seqpairs.scoring import LocalScheme
from seqpairs.scoring.local import MODES


def pairs(length: int, count: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 4, (count, length)).astype(np.uint8)
    queries = targets.copy()
    hit = rng.random(queries.shape) < 0.05
    queries[hit] = rng.integers(0, 4, int(hit.sum()))
    codes = np.concatenate([queries.ravel(), targets.ravel()])
    offsets = np.arange(2 * count + 1, dtype=np.int64) * length
    return codes, offsets


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lengths", default="500,1000,2000,4000,8000")
    p.add_argument("--few", type=int, default=64, help="pairs of the few-pairs runs")
    p.add_argument("--cells", type=float, default=2e10, help="cells of the many-pairs runs")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--most", type=float, default=0, help="cells of a third run, 0: none")
    p.add_argument("--out", default=None, help="JSON lines file")
    args = p.parse_args()
    import cupy

    from seqpairs.backends.gpu import align as gpu_align

    scheme, mode = LocalScheme.dna(6, -4, 3, 1), MODES["local"]
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rows = []
    for length in map(int, args.lengths.split(",")):
        counts = [("few", args.few), ("many", max(args.few, int(args.cells / length ** 2)))]
        if args.most:
            counts.append(("most", max(args.few, int(args.most / length ** 2))))
        for label, count in counts:
            codes, offsets = pairs(length, count)
            pa = np.arange(count)
            pb = pa + count
            results = {}
            for kernel, long_from in (("thread a pair", 1 << 30), ("warp a pair", 0)):
                choice = {"long_from": long_from, "fill_pairs": 0}
                ends = gpu_align.ends(codes, offsets, scheme, mode, **choice)
                starts = gpu_align.starts(codes, offsets, scheme, mode, **choice)
                starts(pa[:2], pb[:2], *ends(pa[:2], pb[:2]))  # compile
                times = []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    out = ends(pa, pb)
                    back = starts(pa, pb, *out)
                    times.append(time.perf_counter() - t0)
                results[kernel] = [*out, *back]
                seconds = float(np.median(times))
                row = {"device": device, "length": length, "pairs": count, "run": label,
                       "kernel": kernel, "seconds": round(seconds, 4),
                       "end_to_end_gcups": round(count * length ** 2 / seconds / 1e9, 1)}
                print(json.dumps(row), flush=True)
                rows.append(row)
            same = all(np.array_equal(a, b) for a, b in zip(*results.values()))
            print(json.dumps({"length": length, "run": label, "same_results": same}), flush=True)
    if args.out:
        with open(args.out, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
