"""Dense SeqDist distances (every pair's: `seqpairs distance --seqdist/--condensed/--phylip
/--matrix` without an edge list) on 400 bp reads of benchmarks/communities.py:

    python benchmarks/bench_dense.py [--backend gpu] [--log2n 13 14] [--cli 14]

For each size 2^k, pairs.distance.compute with edges=False (every pair through the
backend's screen alone, cost and length being all a distance needs) against the pass of
the full kernel that a dense output took before (edges=True, no distance limit), the
distances checked bit for bit, each timed after a warm-up (kernels compiled); GCUPS =
DP cells / seconds. --cli: `seqpairs distance --condensed` as a whole process (reading,
tiling, the matrix written) at those sizes.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from communities import community, write_fasta  # noqa: E402

from seqpairs import backends, scoring  # noqa: E402
from seqpairs.formats.fasta import read_unique_fasta  # noqa: E402
from seqpairs.pairs import distance, tiling  # noqa: E402


def timed(seqs, bins, tiles, backend, **options):
    start = time.perf_counter()
    _, dense = distance.compute(seqs, bins, tiles, backend=backend,
                                scheme=scoring.get("seqdist"), dense=True, **options)
    return time.perf_counter() - start, dense


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="gpu", choices=("gpu", "cpu"))
    parser.add_argument("--log2n", type=int, nargs="+", default=[13])
    parser.add_argument("--cli", type=int, nargs="*", default=[],
                        help="log2 sizes of the whole-process runs")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    backend = backends.select(args.backend)
    print(f"# {datetime.date.today()}, backend {backend.name}")
    print("| sequences | pairs | dense only s | GCUPS | full pass s | GCUPS | same bits |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for k in sorted(set(args.log2n) | set(args.cli)):
            fasta = Path(tmp) / f"community_{k}.fasta"
            write_fasta(fasta, community(2 ** k))
            if k not in args.log2n:
                continue
            seqs = read_unique_fasta(str(fasta))
            bins = tiling.make_bins(seqs.lengths, tiling.BIN_WIDTH)
            tiles = tiling.make_tiles(seqs.lengths, bins, tiling.TILE_PAIRS)
            cells = float(tiles["cells"].sum())
            timed(seqs, bins, tiles[:1], backend, edges=False, threads=args.threads)
            timed(seqs, bins, tiles[:1], backend, threads=args.threads)  # warm-ups
            new_s, new = timed(seqs, bins, tiles, backend, edges=False, threads=args.threads)
            old_s, old = timed(seqs, bins, tiles, backend, threads=args.threads)
            same = np.array_equal(new.view(np.int64), old.view(np.int64))
            print(f"| 2^{k} | {int(tiles['pairs'].sum()):,} | {new_s:.2f} | "
                  f"{cells / new_s / 1e9:,.1f} | {old_s:.2f} | {cells / old_s / 1e9:,.1f} | "
                  f"{same} |", flush=True)
        for k in args.cli:
            fasta = Path(tmp) / f"community_{k}.fasta"
            out = Path(tmp) / f"community_{k}.npy"
            command = [sys.executable, "-m", "seqpairs", "distance", "-i", str(fasta),
                       "--condensed", str(out), "--backend", args.backend]
            if args.threads:
                command += ["--threads", str(args.threads)]
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - start
            print(f"`seqpairs distance --condensed`, 2^{k} sequences: {seconds:.1f} s whole "
                  f"process ({out.stat().st_size / 2**30:.2f} GiB written)", flush=True)
            out.unlink()


if __name__ == "__main__":
    main()
