"""The CPU backend: Numba kernels on the CPU cores (the contract: backends/__init__.py)."""
from __future__ import annotations

import numpy as np

from .. import Backend
from . import (
    affine,
    align,
    band,
    local,
    qgrams,
    relaxed,
    scan,
    seqdist,
    trace_affine,
    trace_seqdist,
)

BACKEND = Backend(
    name="cpu",
    xp=np,
    to_host=np.asarray,
    pairs_per_batch=250_000,
    cells_per_call=4e9,  # about 1.5 s on two cores
    seqdist=seqdist.aligner,
    seqdist_screen=None,
    seqdist_dense=seqdist.dense_aligner,
    seqdist_band=band.aligner,
    seqdist_upper=band.upper,
    qgram_shared=qgrams.QGramCounts,
    affine=affine.aligner,
    affine_counts=trace_affine.counter,
    local_scores=local.local_scores,
    trace_seqdist=trace_seqdist.trace_pairs,
    trace_affine=trace_affine.tracer,
    align_ends=align.ends,
    align_starts=align.starts,
    trace_windows=align.trace_windows,
    scan_rows=scan.rows,
    scan_peaks=scan.peaks,
    scan_slots=scan.slots,
    affine_counts_traced=True,
    # the bands of 4 and then 8, each with a lower band of 24 (its cells' gaps at the least
    # they can cost, docs/pruning.md): 20,000 random pairs of 2^10 community reads, two
    # threads, full kernel 1.66 s, band 4 0.33 s, band 8 0.43 s: 7.2 and 5.4 full cells a
    # band cell (`bench_upper.py --backend cpu --kernels 20000`; band 8 17.8 before its lane
    # loops vectorised, 6.5 before its last row and column were). The band of 4 first
    # certifies 98% of the pairs that C005's bands see at three quarters of the band of 8's
    # time: C005 at the thresholds 2.15 -> 2.00 s, 2^11 community reads 18.2 -> 17.2-17.3 s
    # (benchmarks/RESULTS.md); a wider band costs more than the full alignment it would
    # spare
    band_cost={4: 7.2, 8: 5.4},
    band_lower={4: 24, 8: 24},
    # bands for the pairs sharing 0.7 of their q-gram positions: on C005's distinct reads
    # at the thresholds 2.41 s against 2.62 s at 0.8 (the full kernel's pairs 13,476 ->
    # 1,087: reads at 95-97% identity whose leading gaps make their distance 0.25-0.35),
    # on 2^11 community reads 17.4 against 17.1 s (benchmarks/RESULTS.md)
    band_shared=0.7,
    # an upper bound's cell, 64 pairs in lockstep (`bench_upper.py --backend cpu --kernels
    # 100000`, 400 bp community reads, two runs: 1.09 / 1.02 and 0.84 / 0.80); the narrow
    # band proves 92% of what the wide one proves on the community at 58% of its cells
    upper_cost={4: 1.1, 8: 0.8},
    seqdist_relaxed=relaxed.bounder,
    relaxed_cost=0.4,  # 2.37 against 0.92 G cells a second on a thread (benchmarks/RESULTS.md)
    # the pruning kernels' first compilation takes 15-18 s on two cores (band 7.8, 10.4
    # since it is vectorised; upper bounds 4.1, q-grams 1.2, relaxed 1.6), the full kernel
    # 1.8 G cells a second: runs of fewer cells (the example workflow's 6.2e9) cannot win
    # it back (benchmarks/RESULTS.md)
    prune_least_cells=1e10,
    qgram_memory=256 << 20,  # whole 8-gram bitsets (8 KiB) up to 2^15 sequences
)
