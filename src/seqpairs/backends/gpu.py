"""CuPy GPU backend: the CUDA kernels of gpu_kernels/ through RawModule (NVRTC).

Same interface and the same results, bit for bit, as backends/cpu.py (SeqDist) and
backends/cpu_affine.py (integer affine scoring).
"""
from __future__ import annotations

import functools
import logging
from importlib.resources import files

import numpy as np

from ..affine import NEG
from ..errors import UserError
from ..scoring import SEQDIST_SUBST
from .cpu import check_lengths, unpack

log = logging.getLogger("seqpairs.gpu")
# gpu_kernels/ at the top of the repository, installed as this package (pyproject.toml)
KERNELS = files("seqpairs.gpu_kernels")
STRIP = 16  # columns per register strip, with MAX_REGISTERS: best measured on an H200 (RESULTS.md)
ROWS = 2  # rows in flight per thread (SeqDist kernel)
BLOCK = 128
MAX_REGISTERS = 168  # per thread: 12 warps per SM; None: the compiler's choice
SCREEN_STRIP, SCREEN_MAX_REGISTERS = 24, 168  # the screen's best on an H100 (RESULTS.md)
AFFINE_STRIP = 40  # the affine kernel's best on an H100, with MAX_REGISTERS (RESULTS.md)
NAME = "gpu"
PAIRS_PER_BATCH = 4_000_000  # tiles are grouped into launches of about this many pairs
# Device memory per pair besides the boundary column: pair ids and outputs.
PAIR_BYTES = 8 + 8 + 8 + 8
# Boundary column bytes per row: SeqDist (cost, two count words, letter), its screen (one
# count word).
SEQDIST_ROW_BYTES = 8 + 4 + 4 + 1
SCREEN_ROW_BYTES = 8 + 4 + 1
POISON = np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # no valid packed counts look like this
INT_POISON = np.int32(-(2**31))  # below any score; lengths are positive


def array_module():
    """The array module of this backend's inputs and outputs: CuPy (device arrays)."""
    import cupy

    return cupy


def to_host(array):
    return array.get()


def use_device(local_rank: int) -> None:
    """Make GPU local_rank (modulo the GPUs visible) the current device of this process."""
    import cupy

    cupy.cuda.Device(local_rank % cupy.cuda.runtime.getDeviceCount()).use()


def available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU"
        return False


@functools.cache
def _kernel(source: str, name: str, options: tuple[str, ...]):
    import cupy

    code = KERNELS.joinpath(source).read_text()
    return cupy.RawModule(code=code, options=("--std=c++17", *options)).get_function(name)


def _options(strip: int, max_registers: int | None, *defines: str) -> tuple[str, ...]:
    options = (f"-DSTRIP={strip}", *defines)
    return options + ((f"--maxrregcount={max_registers}",) if max_registers else ())


def batch_size(max_rows: int, row_bytes: int, free_bytes: int, fraction: float = 0.5) -> int:
    """Pairs per launch so that the boundary column and outputs use `fraction` of free memory."""
    per_pair = (max_rows + 1) * row_bytes + PAIR_BYTES
    return max(BLOCK, int(free_bytes * fraction) // per_pair // BLOCK * BLOCK)


def _launches(pa, pb, lengths, row_bytes: int, max_batch: int | None, block: int, launch):
    """Run `launch(grid, block, d_pa, d_pb, m, rows)` over batches that fit the device.

    pa, pb and the sequence lengths are device arrays.

    `launch` returns the batch's outputs as device arrays; they come back concatenated,
    on the device.
    """
    import cupy

    n = len(pa)
    max_rows = int(lengths[pa].max())
    step = batch_size(max_rows, row_bytes, cupy.cuda.runtime.memGetInfo()[0])
    if max_batch:
        step = min(step, max_batch)
    parts, start = [], 0
    while start < n:
        m = min(step, n - start)
        grid = ((m + block - 1) // block,)
        try:
            outputs = launch(grid, (block,), pa[start:start + m], pb[start:start + m], m,
                             (max_rows + 1) * m)
        except cupy.cuda.memory.OutOfMemoryError:
            # Free memory was shared or overestimated (other processes, a memory pool
            # limit): halve the batch and go on; only one block that does not fit is fatal.
            cupy.get_default_memory_pool().free_all_blocks()
            if m <= block:
                raise UserError(f"GPU out of memory even for {m} pairs of up to {max_rows} "
                                "bp per launch") from None
            step = max(block, m // 2 // block * block)
            log.warning("GPU out of memory at %d pairs per launch; going on with %d", m, step)
            continue
        parts.append(outputs)
        start += m
    return [cupy.concatenate(column) for column in zip(*parts)]


def _seqdist_aligner(full: bool, codes, offsets, max_batch, strip, rows, block, max_registers):
    """A function (pa, pb) -> cost and the counts that `full` selects (see seqdist.cu)."""
    import cupy

    check_lengths(offsets)
    kernel = _kernel("seqdist.cu", "seqdist_pairs" if full else "seqdist_screen",
                     _options(strip, max_registers, f"-DROWS={rows}"))
    row_bytes = SEQDIST_ROW_BYTES if full else SCREEN_ROW_BYTES
    counts = unpack if full else unpack_screen
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    lengths = cupy.diff(d_offsets)
    d_subst = cupy.asarray(SEQDIST_SUBST.ravel())

    def launch(grid, block_shape, d_pa, d_pb, m, rows_total):
        # Poisoned outputs: a pair the kernel did not write stays NaN and is caught below.
        d_cost = cupy.full(m, np.nan, dtype=cupy.float64)
        d_packed = cupy.full(m, POISON, dtype=cupy.uint64)
        boundary = [cupy.empty(rows_total, dtype=cupy.float64),
                    cupy.empty(rows_total, dtype=cupy.uint32)]
        if full:
            boundary.append(cupy.empty(rows_total, dtype=cupy.uint32))
        boundary.append(cupy.empty(rows_total, dtype=cupy.uint8))
        kernel(grid, block_shape, (d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst,
                                   *boundary, d_cost, d_packed))
        return d_cost, d_packed

    def align(pa, pb):
        on_host = isinstance(pa, np.ndarray)
        pa = cupy.ascontiguousarray(cupy.asarray(pa), dtype=cupy.int64)
        pb = cupy.ascontiguousarray(cupy.asarray(pb), dtype=cupy.int64)
        if len(pa) == 0:
            cost, packed = cupy.empty(0), cupy.empty(0, dtype=cupy.int64)
        else:
            cost, packed = _launches(pa, pb, lengths, row_bytes, max_batch, block, launch)
            packed = packed.view(cupy.int64)
            unwritten = int((cupy.isnan(cost) | (packed == -1)).sum())
            if unwritten:
                raise RuntimeError(f"GPU kernel left {unwritten} of {len(pa)} results unwritten")
        out = (cost, *counts(packed))
        return tuple(a.get() for a in out) if on_host else out

    return align


def aligner(codes, offsets, threads=None, max_batch=None, strip=STRIP, rows=ROWS, block=BLOCK,
            max_registers=MAX_REGISTERS):
    """A function (pa, pb) -> SeqDist alignments of those pairs on the current GPU.

    The sequences go to the device once. Returns cost (float64) and length, matches,
    aligned, leading (int32), like the CPU backend: as device arrays for device inputs,
    as host arrays for host inputs. `threads` is the CPU backend's and is ignored here.
    """
    return _seqdist_aligner(True, codes, offsets, max_batch, strip, rows, block, max_registers)


def screener(codes, offsets, max_batch=None, strip=SCREEN_STRIP, rows=ROWS, block=BLOCK,
             max_registers=SCREEN_MAX_REGISTERS):
    """A function (pa, pb) -> cost (float64) and length, matches, aligned pairs (int32).

    The same alignments as aligner()'s, cost and length to the last bit, at a third fewer
    instructions per cell: it leaves out where the first and last aligned pairs are.
    identity.screen_bound turns its counts into a bound on aligner()'s identity bounds.
    """
    return _seqdist_aligner(False, codes, offsets, max_batch, strip, rows, block,
                            max_registers)


def unpack_screen(packed):
    """(length, matches, aligned pairs) int32 arrays from the screen's packed counts."""
    return tuple(((packed >> shift) & 0xFFFF).astype(np.int32) for shift in (0, 16, 32))


def packed_width(scheme, max_len: int) -> int:
    """32 when every value affine.cu computes for sequences up to max_len bp, and one step
    beyond, has a score within 16 bits above the impossible state's; else 64.

    A path of diagonal steps and then one gap reaches every cell, so no H is below
    -(worst substitution + extension) * max_len - opening; E, F and the intermediate sums
    are at most a few steps lower, and nothing is above best substitution * (max_len + 1).
    """
    matrix = scheme.matrix()
    worst, best = max(0, -int(matrix.min())), max(0, int(matrix.max()))
    opening = max(scheme.gap_open, scheme.end_open)
    extension = max(scheme.gap_extend, scheme.end_extend)
    lowest = -((worst + extension) * max_len + 3 * (opening + extension + worst))
    return 32 if lowest > _neg_score_32(scheme) and best * (max_len + 1) < 2**15 else 64


def _neg_score_32(scheme) -> int:
    """The score of an impossible state in 16 bits: an extension below it must not wrap."""
    return -(2**15) + max(scheme.gap_extend, scheme.end_extend) + 1


def affine_aligner(codes, offsets, scheme, max_batch=None, strip=AFFINE_STRIP, block=BLOCK,
                   max_registers=MAX_REGISTERS):
    """A function (pa, pb) -> (score, length) int32 arrays under an AffineScheme, on the GPU.

    Same results as backends.cpu_affine. Substitution scores must fit int8 (the kernel
    packs a column's four scores in one word). States are packed in 32 bits when
    packed_width() allows it for the longest sequence, else in 64.
    """
    import cupy

    max_len = check_lengths(offsets)
    matrix = scheme.matrix()
    if matrix.min() < -128 or matrix.max() > 127:
        raise UserError("the GPU kernel needs substitution scores between -128 and 127")
    width = packed_width(scheme, max_len)
    packed = np.int32 if width == 32 else np.int64
    shift, neg = (16, _neg_score_32(scheme)) if width == 32 else (32, NEG)
    kernel = _kernel("affine.cu", f"affine_pairs_{width}", _options(strip, max_registers))
    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    lengths = cupy.diff(d_offsets)
    d_subst = cupy.asarray(np.ascontiguousarray(matrix, dtype=np.int32).ravel())
    steps = tuple(packed(c << shift) for c in (
        scheme.gap_open + scheme.gap_extend, scheme.gap_extend,
        scheme.end_open + scheme.end_extend, scheme.end_extend))
    ends = (np.int32(scheme.end_open), np.int32(scheme.end_extend), packed(neg << shift))
    row_bytes = 2 * np.dtype(packed).itemsize  # H and E

    def launch(grid, block_shape, d_pa, d_pb, m, rows_total):
        d_score = cupy.full(m, INT_POISON, dtype=cupy.int32)
        d_length = cupy.full(m, INT_POISON, dtype=cupy.int32)
        kernel(grid, block_shape, (
            d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst, *steps, *ends,
            cupy.empty(rows_total, dtype=packed), cupy.empty(rows_total, dtype=packed),
            d_score, d_length))
        return d_score, d_length

    def align(pa, pb):
        on_host = isinstance(pa, np.ndarray)
        pa = cupy.ascontiguousarray(cupy.asarray(pa), dtype=cupy.int64)
        pb = cupy.ascontiguousarray(cupy.asarray(pb), dtype=cupy.int64)
        if len(pa) == 0:
            score = length = cupy.empty(0, dtype=cupy.int32)
        else:
            score, length = _launches(pa, pb, lengths, row_bytes, max_batch, block, launch)
            unwritten = int((length == INT_POISON).sum())
            if unwritten:
                raise RuntimeError(f"GPU kernel left {unwritten} of {len(pa)} results unwritten")
        return (score.get(), length.get()) if on_host else (score, length)

    return align
