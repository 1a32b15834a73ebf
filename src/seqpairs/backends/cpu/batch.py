"""The CPU kernels' threads (in_parallel: nogil Numba functions over ranges of their tasks
on this thread and a pool's), and the wrapper of the one-pair-at-a-time kernels
(affine.py, align.py): pairs in parallel chunks, outputs allocated per call."""
from __future__ import annotations

import functools
import queue
from concurrent.futures import ThreadPoolExecutor, wait

import numba
import numpy as np

from ..common import check_lengths


def thread_count(threads: int | None) -> int:
    """The threads a kernel runs on: `threads` capped at Numba's pool; None: all."""
    return min(threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(workers, thread_name_prefix="seqpairs-kernel")


def in_parallel(kernel, tasks: int, threads: int | None, *args) -> None:
    """kernel(first, stop, *args), a nogil Numba function over its tasks first..stop-1,
    over every task 0..tasks-1 on thread_count(threads) threads at once (this one and a
    pool's), which take chunks in turn, each half a thread's share of what is left. A
    prange loop would do the same, but Numba's parfor pass took 8 of the 21 s that a first
    run of the example's distance stage spent compiling (benchmarks/RESULTS.md).
    Numba's own pool is left to formats/bulk.py's parsing."""
    threads = thread_count(threads)
    chunks, first = queue.SimpleQueue(), 0
    while first < tasks:  # smaller and smaller: the threads end together
        stop = first + max(1, (tasks - first) // (2 * threads))
        chunks.put((first, stop))
        first = stop

    def work():
        while True:
            try:
                first, stop = chunks.get_nowait()
            except queue.Empty:
                return
            kernel(first, stop, *args)

    helpers = [_pool(threads - 1).submit(work) for _ in range(threads - 1)]
    try:
        work()
    finally:  # no helper still at work on the arguments once this returns or raises
        wait(helpers)
    for helper in helpers:
        helper.result()


def pair_kernel(codes, offsets, threads, batch, scheme_values, dtypes,
                finish=lambda *outputs: outputs):
    """The contract's kernel (pa, pb) -> finish(*outputs) over `batch`, a nogil Numba
    function batch(first, stop, codes, offsets, pa, pb, *scheme_values, *outputs, max_len)
    that fills one output array of each of `dtypes` for pairs first..stop-1 (in_parallel)."""

    def align(pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        outputs = [np.empty(len(pa), dtype=dtype) for dtype in dtypes]
        if len(pa):
            in_parallel(batch, len(pa), threads, codes, offsets, pa, pb, *scheme_values,
                        *outputs, check_lengths(offsets))
        return finish(*outputs)

    return align
