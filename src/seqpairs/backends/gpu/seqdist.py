"""The SeqDist kernels on the GPU (gpu_kernels/seqdist.cu): `seqdist_pairs`, bit for bit the
CPU kernel's cost and counts, `seqdist_screen`, the same cost and length with matches
and aligned pairs at a third fewer instructions per cell, and `seqdist_dense`, the screen
without matches. The costs reach the kernel from the SeqDistScheme as compile-time
defines (kernels.seqdist_defines)."""
from __future__ import annotations

import numpy as np

from ..common import check_lengths, unpack
from .kernels import VARIANTS, seqdist_defines
from .launch import check_written, device_pairs, one_thread_per_pair

# Boundary column bytes per row: the full kernel (cost, two count words, letter), the
# screens (one count word).
ROW_BYTES = {"seqdist": 8 + 4 + 4 + 1, "seqdist_screen": 8 + 4 + 1, "seqdist_dense": 8 + 4 + 1}
POISON = np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # no valid packed counts look like this
# a screen cell against a full kernel's: 784 / 870 GCUPS at 400 bp on an H200
# (benchmarks/RESULTS.md, "Boundaries read rows ahead")
SCREEN_COST = 0.9


def unpack_screen(packed):
    """(length, matches, aligned pairs) int32 arrays from the screen's packed counts."""
    return tuple(((packed >> shift) & 0xFFFF).astype(np.int32) for shift in (0, 16, 32))


def aligner(codes, offsets, scheme, threads=None, *, name: str = "seqdist", max_batch=None,
            **tuning):
    """The contract's seqdist kernel (name "seqdist"), or the screen's ("seqdist_screen",
    "seqdist_dense": kernels.VARIANTS) on the current GPU. The sequences go to the device
    once; results come as device arrays for device inputs, as host arrays for host inputs.
    `tuning`: strip, rows, max_registers (kernels.Variant.tuned); `threads` is the CPU's
    and ignored."""
    import cupy

    check_lengths(offsets)
    screen = name != "seqdist"
    kernel = VARIANTS[name].tuned(**tuning).with_defines(**seqdist_defines(scheme))
    kernel = kernel.function_handle()
    counts = unpack_screen if screen else unpack
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    lengths = cupy.diff(d_offsets)
    d_subst = cupy.asarray(scheme.matrix().ravel())

    def launch(grid, block, d_pa, d_pb, m, rows_total):
        # Poisoned outputs: a pair the kernel did not write stays NaN and is caught below.
        d_cost = cupy.full(m, np.nan, dtype=cupy.float64)
        d_packed = cupy.full(m, POISON, dtype=cupy.uint64)
        boundary = [cupy.empty(rows_total, dtype=cupy.float64),
                    cupy.empty(rows_total, dtype=cupy.uint32)]
        if not screen:
            boundary.append(cupy.empty(rows_total, dtype=cupy.uint32))
        boundary.append(cupy.empty(rows_total, dtype=cupy.uint8))
        kernel(grid, block, (d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst, *boundary,
                             d_cost, d_packed))
        return d_cost, d_packed

    def align(pa, pb):
        pa, pb, on_host = device_pairs(pa, pb)
        if len(pa) == 0:
            cost, packed = cupy.empty(0), cupy.empty(0, dtype=cupy.int64)
        else:
            cost, packed = one_thread_per_pair(lengths, pa, pb, ROW_BYTES[name], max_batch,
                                               launch)
            packed = packed.view(cupy.int64)
            check_written(cupy.isnan(cost) | (packed == -1), len(pa), "results")
        out = (cost, *counts(packed))
        return tuple(a.get() for a in out) if on_host else out

    return align


def screener(codes, offsets, scheme, threads=None, **options):
    """The contract's seqdist_screen kernel: cost (float64) and length, matches, aligned
    pairs (int32), the same alignments as aligner()'s, cost and length to the last bit.
    pairs.identity.screen_bound turns its counts into a bound on aligner()'s bounds."""
    return aligner(codes, offsets, scheme, threads, name="seqdist_screen", **options)


def dense_aligner(codes, offsets, scheme, threads=None, **options):
    """The contract's seqdist_dense kernel: cost (float64) and length (int32), the screen's
    without its match count (benchmarks/RESULTS.md, "The dense outputs' GPU kernel without
    matches")."""
    dense = aligner(codes, offsets, scheme, threads, name="seqdist_dense", **options)
    return lambda pa, pb: dense(pa, pb)[:2]
