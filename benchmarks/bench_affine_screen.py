"""The affine screen on the GPU (issue 16): all pairs of proteins under BLOSUM62 and of DNA
reads under the vsearch preset, screened (pairs.identity.AffineScreen, then counts for the
pairs it keeps) against every pair counted (prune=False, `--no-prune`).

    python benchmarks/bench_affine_screen.py [--proteins 6000] [--reads 6000]
                                             [--max-distance 0.1] [--repeats 2]
                                             [--sweep strip=16 strip=32,load=4 ...]

Proteins: families of a random root (Robinson frequencies, 150-350 aa) mutated at 2-12%
(substitutions, and indels at a tenth of that), 10 members each. Reads: 400 bp of
benchmarks/communities.py's community (taxa 2-20% apart). For each set: the kernels'
rates on 200,000 of its pairs, 1,000 sequences against each of 200 others (affine_screen.cu
at the screen's weights in each --sweep variant of its defines and register cap, and
affine_trace.cu's counts; best of --repeats after a warm-up), then the distance stage in
process (pairs.distance.compute, default thresholds: --max-distance, candidate identity
0.97), screened and counted in full: seconds, GCUPS over every pair's cells, the pairs
the screen sent to the counts, and the kept pairs (the same in both, checked).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_zhang import AMINO_ACIDS, ROBINSON  # noqa: E402
from communities import community  # noqa: E402
from seeds.common import header  # noqa: E402

from seqpairs import backends, scoring  # noqa: E402
from seqpairs.backends.gpu import affine as gpu_affine  # noqa: E402
from seqpairs.formats.distances import LAYOUTS  # noqa: E402
from seqpairs.formats.fasta import read_unique_fasta  # noqa: E402
from seqpairs.pairs import distance  # noqa: E402
from seqpairs.pairs import tiling as binning  # noqa: E402
from seqpairs.pairs.identity import AffineScreen  # noqa: E402


def protein_families(rng, count: int) -> list[str]:
    p = np.array([ROBINSON[c] for c in AMINO_ACIDS])
    p /= p.sum()
    letters = np.array(list(AMINO_ACIDS))
    seqs = []
    while len(seqs) < count:
        root = rng.choice(letters, int(rng.integers(150, 351)), p=p)
        for _ in range(10):
            rate = rng.uniform(0.02, 0.12)
            member = root.copy()
            hit = rng.random(len(member)) < rate
            member[hit] = rng.choice(letters, int(hit.sum()), p=p)
            keep = rng.random(len(member)) >= rate / 10
            seqs.append("".join(member[keep]))
    return seqs[:count]


def timed(function, repeats: int) -> float:
    import cupy

    function()  # warm-up: compiling, caches
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        cupy.cuda.Device().synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def run(name: str, seqs: list[str], scheme, args, folder: Path) -> None:
    import cupy

    fasta = folder / f"{name}.fasta"
    fasta.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    seqset = read_unique_fasta(fasta, scheme.alphabet)
    lengths = seqset.lengths.astype(np.float64)
    test = AffineScreen.at(2, min(1 - args.max_distance, 0.97), int(lengths.max()))
    # 1,000 As against each of 200 Bs, as the stage's tiles group them
    pa, pb = (a.ravel() for a in np.meshgrid(np.arange(1000), np.arange(1000, 1200)))
    cells = float((lengths[pa] * lengths[pb]).sum())
    d_pa, d_pb = cupy.asarray(pa), cupy.asarray(pb)
    count = gpu_affine.counter(seqset.codes, seqset.offsets, scheme)
    kernels = [(f"affine_screen {','.join(f'{k}={v}' for k, v in tuning.items()) or 'as set'}",
                gpu_affine.screener(seqset.codes, seqset.offsets, scheme, **tuning))
               for tuning in args.sweep]
    calls = [(label, lambda screen=screen: screen(d_pa, d_pb, test.alpha, test.beta))
             for label, screen in kernels] + [("affine_counts", lambda: count(d_pa, d_pb))]
    first = None
    for label, call in calls:
        seconds = timed(call, args.repeats)
        if label.startswith("affine_screen"):  # every variant the same scores and weights
            values = [cupy.asnumpy(v) for v in call()]
            first = first or values
            if not all(np.array_equal(a, b) for a, b in zip(first, values)):
                raise SystemExit(f"{name}: {label} differs from {kernels[0][0]}")
        print(f"{name}\t{label}\t200000 pairs\t{seconds:.3f} s\t{cells / seconds / 1e9:.0f} "
              "GCUPS", flush=True)
    total = (lengths.sum() ** 2 - (lengths ** 2).sum()) / 2
    bins = binning.make_bins(seqset.lengths, 25)
    tiles = binning.make_tiles(seqset.lengths, bins, 1 << 22)
    gpu = backends.select("gpu")
    passed = []

    def screener(*given, **options):
        screen = gpu_affine.screener(*given, **options)

        def counted(pa, pb, alpha, beta):
            score, weight = screen(pa, pb, alpha, beta)
            passed.append(int((weight >= test.least(0, 0)).sum()))
            return score, weight

        return counted

    kept = {}
    for label, prune in (("screened", True), ("counted in full", False), ("screened", True)):
        passed.clear()
        backend = dataclasses.replace(gpu, affine_screen=screener) if prune else gpu
        start = time.perf_counter()
        edges, _ = distance.compute(seqset, bins, tiles, backend=backend, scheme=scheme,
                                    max_distance=args.max_distance, candidate_identity=0.97,
                                    prune=prune)
        seconds = time.perf_counter() - start
        kept.setdefault(label, edges)
        counted = f"{sum(passed)} pairs counted" if prune else "every pair counted"
        print(f"{name}\tdistance stage, {label}\t{seqset.n} sequences, "
              f"{seqset.n * (seqset.n - 1) // 2} pairs\t{seconds:.2f} s\t"
              f"{total / seconds / 1e9:.0f} GCUPS\t{counted}\t{len(edges)} kept", flush=True)
    same = all(np.array_equal(getattr(kept["screened"], c), getattr(kept["counted in full"], c))
               for c in ("i", "j", *LAYOUTS["affine"].columns))
    print(f"{name}\tthe same kept pairs and columns: {same}", flush=True)
    if not same:
        raise SystemExit("the screened edge list differs from the one counted in full")


def variant(text: str) -> dict:
    """KNOB=VALUE[,KNOB=VALUE...] as Variant.tuned's keywords (integers)."""
    return {k: int(v) for k, v in (item.split("=") for item in text.split(",") if item)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proteins", type=int, default=6000)
    parser.add_argument("--reads", type=int, default=6000)
    parser.add_argument("--max-distance", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sweep", type=variant, nargs="+", default=[{}],
                        help="the screen kernel's variants timed, each KNOB=VALUE[,...] "
                        "(kernels.Variant.tuned's: strip, load, max_registers; default: "
                        "the dispatch table's)")
    args = parser.parse_args()
    header("The affine screen (benchmarks/bench_affine_screen.py)")
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        if args.proteins:
            run("proteins", protein_families(rng, args.proteins), scoring.get("blosum62"),
                args, Path(tmp))
        if args.reads:
            run("reads", [s for s, _ in community(args.reads)], scoring.get("vsearch"), args,
                Path(tmp))


if __name__ == "__main__":
    main()
