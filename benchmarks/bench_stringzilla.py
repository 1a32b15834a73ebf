"""seqpairs' affine kernel against StringZilla's Needleman-Wunsch (issue 14, item 5): the same
sequences, the same scores checked equal, one process, one device.

    python benchmarks/bench_stringzilla.py [--backend gpu] [--lengths 250 400 1500]
                                           [--cells 3e11] [--repeats 3]

StringZilla (PyPI `stringzillas-cuda` on a GPU, `stringzillas-cpus` on the CPU; 5.3)
scores the cross product of Q queries and Q candidates, one call, with its global
alignment (open -O for a gap's first letter, -E for each further one; every gap, terminal
ones included). seqpairs scores the same Q x Q pairs under AffineScheme.dna(match,
mismatch, O - E, E), whose gaps cost gap_open + k * gap_extend inside and at the ends
alike: the same scores. Sequences: bench_distance.family (a random root mutated at 10%,
a few deletions), Q chosen so that the cross product holds about --cells cells. Both
sides run once to compile and warm up, then --repeats times; the best time counts (the
GPU synchronised). Any score that differs stops the script.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_distance import family  # noqa: E402
from seeds.common import header  # noqa: E402

from seqpairs import backends  # noqa: E402
from seqpairs.scoring import AffineScheme  # noqa: E402
from seqpairs.scoring.alphabet import encode_all as encode  # noqa: E402

# vsearch's scores: match +2, mismatch -4, a gap 20 to open (its first letter 22), 2 a letter
MATCH, MISMATCH, OPEN, EXTEND = 2, -4, 22, 2


def stringzilla_engine(on_gpu: bool):
    """(engine, device scope, the module) of StringZilla's Needleman-Wunsch under the scores
    above: ACGT in classes 0-3."""
    import stringzillas as szs

    classes = np.zeros(256, dtype=np.uint8)
    for code, letter in enumerate("ACGT"):
        classes[ord(letter)] = code
    costs = np.full((32, 32), MISMATCH, dtype=np.int8)
    np.fill_diagonal(costs, MATCH)
    scope = szs.DeviceScope(gpu_device=0) if on_gpu else szs.DeviceScope(cpu_cores=0)
    return szs.NeedlemanWunschScores(classes, costs, -OPEN, -EXTEND, scope), scope, szs


def best_of(call, repeats: int, sync) -> tuple[float, object]:
    """The best seconds of `repeats` calls after one warm-up, and the last call's result."""
    result = call()
    sync()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        sync()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--lengths", type=int, nargs="+", default=[250, 400, 1500])
    parser.add_argument("--cells", type=float, default=3e11, help="cells per timing")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import stringzilla as sz

    on_gpu = args.backend == "gpu"
    engine, scope, szs = stringzilla_engine(on_gpu)
    backend = backends.select(args.backend)
    scheme = AffineScheme.dna(MATCH, MISMATCH, OPEN - EXTEND, EXTEND)
    if on_gpu:
        import cupy

        sync = cupy.cuda.Device().synchronize
    else:
        def sync():
            return None
    header(f"seqpairs' affine kernel against StringZilla {sz.__version__}'s Needleman-Wunsch, "
           f"{args.backend}, +{MATCH}/{MISMATCH}, gaps {OPEN} then {EXTEND} a letter")
    print("length\tpairs\tcells\tStringZilla s\tGCUPS\tseqpairs s\tGCUPS\tratio\tscores equal")
    rng = np.random.default_rng(2026)
    for length in args.lengths:
        side = max(2, int(math.sqrt(args.cells) / length))
        seqs = family(rng, 2 * side, length)
        queries, candidates = seqs[:side], seqs[side:]
        codes, offsets = encode(seqs)
        lengths = np.diff(offsets)
        pa, pb = (a.ravel() for a in np.meshgrid(np.arange(side), np.arange(side, 2 * side),
                                                 indexing="ij"))
        cells = float((lengths[pa] * lengths[pb]).sum())
        sz_queries, sz_candidates = sz.Strs(queries), sz.Strs(candidates)
        if on_gpu:  # in device-accessible memory before the timing, as a caller would keep them
            sz_queries, sz_candidates = szs.to_device(sz_queries), szs.to_device(sz_candidates)
        theirs_s, theirs = best_of(lambda: engine(sz_queries, sz_candidates, device=scope),
                                   args.repeats, sync)
        align = backend.affine(codes, offsets, scheme, None)
        if on_gpu:
            pa, pb = cupy.asarray(pa), cupy.asarray(pb)
        ours_s, ours = best_of(lambda: align(pa, pb), args.repeats, sync)
        ours_scores = backend.to_host(ours[0]).reshape(side, side)
        equal = np.array_equal(ours_scores, np.asarray(theirs))
        print(f"{length}\t{side * side}\t{cells:.3e}\t{theirs_s:.3f}\t{cells / theirs_s / 1e9:.1f}\t"
              f"{ours_s:.3f}\t{cells / ours_s / 1e9:.1f}\t{theirs_s / ours_s:.2f}x\t{equal}",
              flush=True)
        if not equal:
            raise SystemExit(f"{length} bp: the scores differ")


if __name__ == "__main__":
    main()
