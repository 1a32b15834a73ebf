"""Where the distance stage's time goes at the workflow's thresholds (issue 14): the stage
in process on 2^k reads of benchmarks/communities.py (max_distance 0.1, candidate
identity 0.97), every kernel call timed on its own (the device synchronised before and
after, so the kernels do not overlap the host's work as they do in a plain run).

    python benchmarks/profile_distance.py [--backend gpu] [--log2n 14] [--fasta FILE]

Prints per kernel family its calls, pairs and seconds, the wait before each kernel for the
device work queued by the host since the last one (the pruner's tests and compaction on
the device), then the rest of the stage (pair indices, Python, transfers) and the whole;
a warm-up run on 2^10 reads compiles first. --fasta: its distinct sequences instead of the
2^log2n reads (C005's unique.fasta: the CPU's case against vsearch). --cprofile N: the N
functions with the most time of their own (cProfile), the host's side of the rest.
"""
from __future__ import annotations

import argparse
import cProfile
import dataclasses
import logging
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_upper import read_sets, run  # noqa: E402
from seeds.common import header  # noqa: E402

from seqpairs import backends, scoring  # noqa: E402
from seqpairs.formats.fasta import read_unique_fasta  # noqa: E402

FAMILIES = ("qgram_shared", "seqdist_upper", "seqdist_relaxed", "seqdist_band", "seqdist_screen",
            "seqdist")
QUEUED = "device work queued by the host"


def timed_backend(backend, totals):
    """The backend with each kernel family's calls timed into totals[family]: [calls,
    pairs, seconds]."""
    if backend.xp.__name__ == "cupy":
        sync = backend.xp.cuda.Device().synchronize
    else:
        def sync():
            pass

    def timed(family, kernel):
        def call(pa, pb, *rest):
            waited = time.perf_counter()
            sync()
            start = time.perf_counter()
            totals[QUEUED][0] += 1
            totals[QUEUED][2] += start - waited
            out = kernel(pa, pb, *rest)
            sync()
            entry = totals[family]
            entry[0] += 1
            entry[1] += len(pa)
            entry[2] += time.perf_counter() - start
            return out
        return call

    def wrap(family, factory):
        def make(*args, **kwargs):
            kernel = factory(*args, **kwargs)
            call = timed(family, kernel)
            if hasattr(kernel, "densest"):  # the windowed filter of the q-gram counts
                call.densest = timed("qgram_densest", kernel.densest)
            return call
        return make

    return dataclasses.replace(backend, **{family: wrap(family, getattr(backend, family))
                                          for family in FAMILIES
                                          if getattr(backend, family) is not None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gpu")
    parser.add_argument("--log2n", type=int, default=14)
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="print the N functions with the most time of their own")
    parser.add_argument("--fasta", type=Path, help="profile this FASTA's distinct sequences")
    args = parser.parse_args()
    logging.getLogger("seqpairs").setLevel(logging.INFO)
    header("Where the distance stage's time goes (benchmarks/profile_distance.py)")
    scheme = scoring.get("seqdist")
    plain = backends.select(args.backend)
    sets = read_sets(scheme, 10 if args.fasta else args.log2n)  # no reads made for nothing
    if args.fasta:
        sets[args.log2n] = read_unique_fasta(args.fasta, scheme.alphabet)
    run(sets[10], plain, scheme)  # compiles
    totals = defaultdict(lambda: [0, 0, 0.0])
    profile = cProfile.Profile() if args.cprofile else None
    if profile:
        profile.enable()
    seconds, pruning, edges = run(sets[args.log2n], timed_backend(plain, totals), scheme)
    if profile:
        profile.disable()
    name = args.fasta.name if args.fasta else f"2^{args.log2n}"
    print(f"{name}\t{seconds:.2f} s\t{len(edges)} kept\t{pruning}")
    print("family\tcalls\tpairs\tseconds\tshare")
    for family, (calls, pairs, spent) in totals.items():
        print(f"{family}\t{calls}\t{pairs}\t{spent:.2f}\t{spent / seconds:.3f}")
    rest = seconds - sum(spent for _, _, spent in totals.values())
    print(f"the rest\t\t\t{rest:.2f}\t{rest / seconds:.3f}")
    if profile:
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(args.cprofile)


if __name__ == "__main__":
    main()
