"""The banded SeqDist alignment with a certificate on the GPU (gpu_kernels/band.cu), bit
for bit what backends/cpu/band.py computes (docs/pruning.md)."""
from __future__ import annotations

import numpy as np

from ..common import EDGES, check_lengths, unpack
from .kernels import BLOCK, VARIANTS, seqdist_defines
from .launch import PAIR_BYTES, check_written, device_pairs, free_bytes, in_runs

# Half-widths of the band the GPU runs: one compiled variant each (kernels.VARIANTS).
# (half-width, lower band's half-width or 0) -> the compiled variant
BANDS = {(int(w), int(lower[0]) if lower else 0): name for name in VARIANTS
         if name.startswith("seqdist_band_")
         for w, *lower in [name.removeprefix("seqdist_band_").split("_")]}
WIDTHS = tuple(sorted({w for w, _ in BANDS}))
UPPER_WIDTHS = tuple(int(name.rsplit("_", 1)[1]) for name in VARIANTS
                     if name.startswith("seqdist_upper_"))
# What a band cell costs against a cell of the screen that aligns the rest, and an upper
# bound's cell likewise: `bench_upper.py --kernels` (benchmarks/RESULTS.md, "The pruning
# kernels' costs"). The band of 8 runs with a lower band of 48 (its own kernel,
# seqdist_lower: 13.0 screen cells a band cell on an H200) on the pairs sharing 0.6 of
# their q-gram positions: it certifies most pairs near the identity threshold too, and
# 2^15 reads at the thresholds took 15.6-16.0 s against 17.4-17.5 s with 24 on 0.8
# (RESULTS.md, "The lower band in its own kernel").
COST = {8: 13.0, 12: 8.6}
LOWER = {8: 48}
SHARED = 0.6
UPPER_COST = {4: 1.0, 8: 0.9}
POISON = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
BAND_PAIR_BYTES = PAIR_BYTES + 1 + 8 + 8  # exact flag, packed counts, upper bound


def runs(count: int, per_item: int, launch, what: str):
    """launch(start, stop) over runs of at most a quarter of the free memory."""
    step = max(BLOCK, free_bytes() // 4 // per_item // BLOCK * BLOCK)
    return in_runs(count, lambda start, most: min(count, start + min(step, most)), launch,
                   BLOCK, what)


def aligner(codes, offsets, scheme, threads=None):
    """The contract's seqdist_band kernel on the current GPU: (pa, pb, width, lower=0) -> exact,
    cost, length, matches, aligned, leading, upper (device arrays for device inputs, host
    arrays for host inputs); (width, lower) one of BANDS. `threads` is the CPU's and ignored.
    With a lower band, seqdist_lower first writes what the band reads of it: EDGES values a
    row of A and the last row's slots, 4 bytes each."""
    import cupy

    check_lengths(offsets)
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    d_subst = cupy.asarray(scheme.matrix().ravel())
    defines = seqdist_defines(scheme)
    rows = int(np.diff(offsets).max(initial=0))  # the longest A's rows, 1 .. la - 1

    def align(pa, pb, width, lower=0):
        lower = lower if lower > width else 0
        name = BANDS.get((width, lower))
        if name is None:
            raise ValueError(f"the GPU band has (half-width, lower band) {sorted(BANDS)}, "
                             f"not ({width}, {lower})")
        kernel = VARIANTS[name].with_defines(**defines).function_handle()
        lower_kernel = (VARIANTS[name.replace("band", "lower", 1)].with_defines(**defines)
                        .function_handle() if lower else None)
        lower_bytes = (EDGES * rows + 2 * lower + 1) * 4 if lower else 0
        pa, pb, on_host = device_pairs(pa, pb)

        def launch(start, stop):
            m = stop - start
            grid, args = ((m + BLOCK - 1) // BLOCK,), (d_codes, d_offsets, pa[start:stop],
                                                        pb[start:stop], np.int32(m), d_subst)
            edges = last_row = cupy.empty(0, dtype=cupy.int32)  # read only with a lower band
            if lower_kernel is not None:
                edges = cupy.empty(EDGES * rows * m, dtype=cupy.int32)
                last_row = cupy.empty((2 * lower + 1) * m, dtype=cupy.int32)
                lower_kernel(grid, (BLOCK,), (*args, edges, last_row))
            exact = cupy.zeros(m, dtype=cupy.uint8)
            cost = cupy.full(m, np.nan, dtype=cupy.float64)
            packed = cupy.full(m, POISON, dtype=cupy.uint64)
            upper = cupy.full(m, np.nan, dtype=cupy.float64)
            kernel(grid, (BLOCK,), (*args, exact, cost, packed, upper, edges, last_row))
            return exact, cost, packed, upper

        if len(pa):
            exact, cost, packed, upper = runs(len(pa), BAND_PAIR_BYTES + lower_bytes, launch,
                                              "pairs")
            check_written(cupy.isnan(cost) | cupy.isnan(upper), len(pa), "band results")
        else:
            exact, cost, upper = cupy.empty(0, cupy.uint8), cupy.empty(0), cupy.empty(0)
            packed = cupy.empty(0, cupy.uint64)
        out = (exact.astype(bool), cost, *unpack(packed.view(cupy.int64)), upper)
        return tuple(a.get() for a in out) if on_host else out

    return align


def upper(codes, offsets, scheme, threads=None):
    """The contract's seqdist_upper kernel on the current GPU: (pa, pb, width) -> upper
    (float64), an upper bound on each pair's cost; width one of UPPER_WIDTHS."""
    import cupy

    check_lengths(offsets)
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    d_subst = cupy.asarray(np.array(scheme.upper_weights[0], dtype=np.int32).ravel())
    defines = seqdist_defines(scheme)

    def bound(pa, pb, width):
        if width not in UPPER_WIDTHS:
            raise ValueError(f"the GPU's upper bounds have half-widths {UPPER_WIDTHS}, not {width}")
        kernel = VARIANTS[f"seqdist_upper_{width}"].with_defines(**defines).function_handle()
        pa, pb, on_host = device_pairs(pa, pb)

        def launch(start, stop):
            m = stop - start
            out = cupy.full(m, np.nan, dtype=cupy.float64)
            kernel(((m + BLOCK - 1) // BLOCK,), (BLOCK,),
                   (d_codes, d_offsets, pa[start:stop], pb[start:stop], np.int32(m), d_subst, out))
            return (out,)

        if len(pa):
            (out,) = runs(len(pa), PAIR_BYTES + 8, launch, "pairs")
            check_written(cupy.isnan(out), len(pa), "upper bounds")
        else:
            out = cupy.empty(0)
        return out.get() if on_host else out

    return bound
