"""CuPy GPU backend: the CUDA kernels of gpu_kernels/ through RawModule (NVRTC).

Same interface and the same results, bit for bit, as backends/cpu.py.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..scoring import SEQDIST_SUBST
from .cpu import MAX_LENGTH, unpack

KERNEL_DIR = Path(__file__).resolve().parents[3] / "gpu_kernels"
STRIP = 16  # columns per register strip, with MAX_REGISTERS: best measured on an H200 (RESULTS.md)
ROWS = 2  # rows in flight per thread
BLOCK = 128
MAX_REGISTERS = 168  # per thread: 12 warps per SM; None: the compiler's choice
NAME = "gpu"
PAIRS_PER_BATCH = 4_000_000  # tiles are grouped into launches of about this many pairs
# Device memory per pair besides the boundary column: pair ids, cost and counts.
PAIR_BYTES = 8 + 8 + 8 + 8
POISON = np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # no valid packed counts look like this


def available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU"
        return False


@functools.cache
def _kernel(strip: int, rows: int, max_registers: int | None):
    import cupy

    source = (KERNEL_DIR / "seqdist.cu").read_text()
    options = (f"-DSTRIP={strip}", f"-DROWS={rows}", "--std=c++17")
    if max_registers:
        options += (f"--maxrregcount={max_registers}",)
    module = cupy.RawModule(code=source, options=options)
    return module.get_function("seqdist_pairs")


def batch_size(max_rows: int, free_bytes: int, fraction: float = 0.5) -> int:
    """Pairs per launch so that the boundary column and outputs use `fraction` of free memory."""
    per_pair = (max_rows + 1) * (8 + 4 + 4 + 1) + PAIR_BYTES
    return max(BLOCK, int(free_bytes * fraction) // per_pair // BLOCK * BLOCK)


def aligner(codes, offsets, threads=None, max_batch=None, strip=STRIP, rows=ROWS, block=BLOCK,
            max_registers=MAX_REGISTERS):
    """A function (pa, pb) -> SeqDist alignments of those pairs on the current GPU.

    The sequences go to the device once. Returns cost (float64) and length, matches,
    aligned, leading (int32), like the CPU backend. `threads` is the CPU backend's and
    is ignored here.
    """
    import cupy

    lengths = np.diff(offsets)
    if lengths.max() > MAX_LENGTH:
        raise UserError(f"a sequence of {int(lengths.max())} bp is longer than the kernel's limit "
                        f"of {MAX_LENGTH} bp")
    kernel = _kernel(strip, rows, max_registers)
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    d_subst = cupy.asarray(SEQDIST_SUBST.ravel())

    def align(pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        n = len(pa)
        cost = np.empty(n, dtype=np.float64)
        packed = np.empty(n, dtype=np.int64)
        if n == 0:
            return (cost, *unpack(packed))
        max_rows = int(lengths[pa].max())
        step = batch_size(max_rows, cupy.cuda.runtime.memGetInfo()[0])
        if max_batch:
            step = min(step, max_batch)
        for start in range(0, n, step):
            m = min(step, n - start)
            rows = (max_rows + 1) * m
            # Poisoned outputs: a pair the kernel did not write stays NaN and is caught below.
            d_cost = cupy.full(m, np.nan, dtype=cupy.float64)
            d_packed = cupy.full(m, POISON, dtype=cupy.uint64)
            kernel(((m + block - 1) // block,), (block,), (
                d_codes, d_offsets, cupy.asarray(pa[start:start + m]),
                cupy.asarray(pb[start:start + m]), np.int32(m), d_subst,
                cupy.empty(rows, dtype=cupy.float64), cupy.empty(rows, dtype=cupy.uint32),
                cupy.empty(rows, dtype=cupy.uint32), cupy.empty(rows, dtype=cupy.uint8),
                d_cost, d_packed))
            cost[start:start + m] = d_cost.get()
            packed[start:start + m] = d_packed.get().view(np.int64)
        unwritten = np.isnan(cost) | (packed == np.int64(-1))
        if unwritten.any():
            raise RuntimeError(f"GPU kernel left {int(unwritten.sum())} of {n} results unwritten")
        return (cost, *unpack(packed))

    return align
