"""What every GPU kernel family does around its launches: runs of work sized to the free
device memory, halved when CuPy runs out of memory anyway, and outputs poisoned before a
launch and checked written after it."""
from __future__ import annotations

import logging

import numpy as np

from ...errors import UserError
from .kernels import BLOCK

log = logging.getLogger("seqpairs.gpu")
# Device memory per pair besides the boundary column: pair ids and outputs.
PAIR_BYTES = 8 + 8 + 8 + 8
INT_POISON = np.int32(-(2**31))  # integer outputs' poison: below any score, lengths are positive


def free_bytes() -> int:
    import cupy

    return cupy.cuda.runtime.memGetInfo()[0]


def in_runs(count: int, run_end, launch, smallest: int, what: str):
    """Call launch(start, stop) over consecutive runs [start, stop) of `count` items and
    return its outputs (tuples of device arrays) concatenated column by column.

    run_end(start, most) is the end of the run from `start` that the caller's memory budget
    allows, with at most `most` items. When a launch runs out of device memory anyway
    (memory shared with other processes, a pool limit), the pool is freed and the run is
    tried again with half as many items; a run of `smallest` items or fewer that does not
    fit is a UserError ("GPU out of memory even for N <what> per launch").
    """
    import cupy

    parts, start, most = [], 0, count
    while start < count:
        stop = run_end(start, most)
        try:
            outputs = launch(start, stop)
        except cupy.cuda.memory.OutOfMemoryError:
            cupy.get_default_memory_pool().free_all_blocks()
            if stop - start <= smallest:
                raise UserError(f"GPU out of memory even for {stop - start} {what} per "
                                "launch") from None
            most = max(smallest, (stop - start) // 2)
            log.warning("GPU out of memory at %d %s per launch; going on with at most %d",
                        stop - start, what, most)
            continue
        parts.append(outputs)
        start = stop
    return [cupy.concatenate(column) for column in zip(*parts)]


def check_written(unwritten, total: int, what: str) -> None:
    """RuntimeError when the mask `unwritten` (outputs still holding their poison) has any."""
    left = int(unwritten.sum())
    if left:
        raise RuntimeError(f"GPU kernel left {left} of {total} {what} unwritten")


def batch_size(max_rows: int, row_bytes: int, free: int, fraction: float = 0.5) -> int:
    """Pairs per launch so that the boundary column and outputs use `fraction` of free memory."""
    per_pair = (max_rows + 1) * row_bytes + PAIR_BYTES
    return max(BLOCK, int(free * fraction) // per_pair // BLOCK * BLOCK)


def to_device(host: np.ndarray, chunk_bytes: int = 1 << 27):
    """A device copy of a host array through two pinned staging buffers in turn (copies
    from pageable memory measured 1-2 GB/s for the gigabytes of 30M pairs' sequences):
    one fills while the other goes over the bus."""
    import cupy

    host = np.ascontiguousarray(host)
    out = cupy.empty(host.shape, host.dtype)
    if host.nbytes <= chunk_bytes:
        out.set(host)
        return out
    source, target = host.reshape(-1).view(np.uint8), out.reshape(-1).view(cupy.uint8)
    staging = [np.frombuffer(cupy.cuda.alloc_pinned_memory(chunk_bytes), np.uint8,
                             chunk_bytes) for _ in range(2)]
    done = [None, None]  # each buffer's last copy
    stream = cupy.cuda.Stream(non_blocking=True)
    for k, lo in enumerate(range(0, source.size, chunk_bytes)):
        buffer, size = staging[k % 2], min(chunk_bytes, source.size - lo)
        if done[k % 2] is not None:
            done[k % 2].synchronize()
        buffer[:size] = source[lo:lo + size]
        target[lo:lo + size].set(buffer[:size], stream=stream)
        done[k % 2] = stream.record()
    stream.synchronize()
    return out


def device_pairs(pa, pb):
    """pa, pb as contiguous int64 device arrays, and whether they came from the host."""
    import cupy

    on_host = isinstance(pa, np.ndarray)
    return (cupy.ascontiguousarray(cupy.asarray(pa), dtype=cupy.int64),
            cupy.ascontiguousarray(cupy.asarray(pb), dtype=cupy.int64), on_host)


def one_thread_per_pair(lengths, pa, pb, row_bytes: int, max_batch, launch):
    """Run `launch(grid, block, pa, pb, m, rows_total)` of a one-thread-per-pair kernel over
    launches that fit the device (launch.in_runs); returns its outputs concatenated."""
    max_rows = int(lengths[pa].max())
    step = batch_size(max_rows, row_bytes, free_bytes())
    if max_batch:
        step = min(step, max_batch)

    def run_end(start, most):
        m = max(BLOCK, min(step, most) // BLOCK * BLOCK)
        return min(len(pa), start + m)

    def run(start, stop):
        m = stop - start
        return launch(((m + BLOCK - 1) // BLOCK,), (BLOCK,), pa[start:stop], pb[start:stop], m,
                      (max_rows + 1) * m)

    return in_runs(len(pa), run_end, run, BLOCK, f"pairs of up to {max_rows} bp")
