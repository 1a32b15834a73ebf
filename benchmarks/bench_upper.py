"""The counting filter's upper bounds (docs/pruning.md, sections 2 and 4) band after band
against one band (issue 14): the distance stage in process at the workflow's thresholds
(max_distance 0.1, candidate identity 0.97) on 2^k reads of benchmarks/communities.py,
with each set of half-widths given, the kept pairs checked equal.

    python benchmarks/bench_upper.py [--backend gpu] [--log2n 14] [--widths 8 4,8]
                                     [--kernels 1000000]

Prints per set: seconds (the first set after a warm-up run on 2^10 reads, which
compiles), the pruning's log line (where each pair was decided) and the kept pairs.
--kernels N: first the pruning kernels' rates on N random pairs of the 2^10 reads (best
of 3): cells a second of the screen and the full kernel (the full kernel alone where the
backend has no screen),
of the upper bounds and of the bands at each of the backend's widths, and each one's
cost a cell against the screen's (the backend's upper_cost and band_cost are these; its
screen_cost is the inverse of the full kernel's).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from communities import community, write_fasta  # noqa: E402
from seeds.common import header  # noqa: E402

from seqpairs import backends, scoring  # noqa: E402
from seqpairs.formats.distances import LAYOUTS  # noqa: E402
from seqpairs.formats.fasta import read_unique_fasta  # noqa: E402
from seqpairs.pairs import distance, tiling  # noqa: E402


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def read_sets(scheme, log2n: int) -> dict:
    """2^10 community reads (a warm-up run, the kernels' rates) and 2^log2n, as
    SequenceSets by log2n."""
    sets = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in (10, log2n):
            fasta = Path(tmp) / f"community_{k}.fasta"
            write_fasta(fasta, community(1 << k))
            sets[k] = read_unique_fasta(fasta, scheme.alphabet)
    return sets


def run(seqs, backend, scheme):
    bins = tiling.make_bins(seqs.lengths, 25)
    tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
    lines = Lines()
    logging.getLogger("seqpairs").addHandler(lines)
    start = time.perf_counter()
    edges, _ = distance.compute(seqs, bins, tiles, backend=backend, scheme=scheme,
                                max_distance=0.1, candidate_identity=0.97)
    seconds = time.perf_counter() - start
    logging.getLogger("seqpairs").removeHandler(lines)
    pruning = next((line for line in lines.lines if line.startswith("pruning")), "-")
    return seconds, pruning, edges


def kernel_rates(seqs, backend, scheme, count: int) -> None:
    rng = np.random.default_rng(5)
    i, j = (backend.xp.asarray(rng.integers(0, seqs.n, count)) for _ in range(2))
    la, lb = (seqs.lengths.astype(np.float64)[backend.to_host(k)] for k in (i, j))
    # (name, kernel, its arguments beyond the pairs, cells a call)
    kernels = [(name, make(seqs.codes, seqs.offsets, scheme, None), (), (la * lb).sum())
               for name, make in (("screen", backend.seqdist_screen),
                                  ("full kernel", backend.seqdist)) if make is not None]
    upper = backend.seqdist_upper(seqs.codes, seqs.offsets, scheme, None)
    band = backend.seqdist_band(seqs.codes, seqs.offsets, scheme, None)
    kernels += [(f"upper {w}", upper, (w,), ((2 * w + 1) * la + la + lb).sum())
                for w in backend.upper_cost]
    kernels += [(f"band {w}", band, (w, backend.band_lower.get(w, 0)),
                 ((2 * w + 1) * la + la + lb).sum()) for w in backend.band_cost]
    per_cell = None
    for name, kernel, args, cells in kernels:
        def call():
            out = kernel(i, j, *args)
            backend.to_host(out[0] if isinstance(out, tuple) else out)
        call()
        best = min(timed(call) for _ in range(3))
        per_cell = per_cell or best / cells
        print(f"kernel\t{name}\t{count} pairs\t{best:.3f} s\t{cells / best / 1e9:.1f} G cells/s"
              f"\tcost {best / cells / per_cell:.2f}", flush=True)


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gpu")
    parser.add_argument("--log2n", type=int, default=14)
    parser.add_argument("--widths", nargs="+", default=["8", "4,8"],
                        help="sets of the upper bounds' half-widths, each W[,W...]")
    parser.add_argument("--kernels", type=int, default=0,
                        help="time the pruning kernels on this many pairs first")
    args = parser.parse_args()
    logging.getLogger("seqpairs").setLevel(logging.INFO)
    header("The upper bounds band after band (benchmarks/bench_upper.py)")
    scheme = scoring.get("seqdist")
    backend = backends.select(args.backend)
    cost = max(backend.upper_cost.values())
    sets = read_sets(scheme, args.log2n)
    if args.kernels:
        kernel_rates(sets[10], backend, scheme, args.kernels)
    run(sets[10], backend, scheme)  # compiles
    first = None
    for widths in args.widths:
        upper_cost = {int(w): backend.upper_cost.get(int(w), cost) for w in widths.split(",")}
        seconds, pruning, edges = run(sets[args.log2n],
                                      dataclasses.replace(backend, upper_cost=upper_cost),
                                      scheme)
        print(f"2^{args.log2n}\tupper half-widths {widths}\t{seconds:.2f} s\t"
              f"{len(edges)} kept\t{pruning}", flush=True)
        first = first or edges
        if not all(np.array_equal(getattr(first, c), getattr(edges, c))
                   for c in ("i", "j", *LAYOUTS["seqdist"].columns)):
            raise SystemExit(f"half-widths {widths}: the kept pairs differ")


if __name__ == "__main__":
    main()
