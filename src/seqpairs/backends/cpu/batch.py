"""The CPU kernels' threads: Numba's thread pool (prange) or, for the kernels of the
distance stage and the filter, `in_parallel` (nogil Numba functions over ranges of their
tasks on a pool of Python threads); and the wrapper of the one-pair-at-a-time kernels
(affine.py, align.py): pairs in parallel chunks, outputs allocated per call."""
from __future__ import annotations

import functools
import queue
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ..common import check_lengths


def thread_count(threads: int | None) -> int:
    """The threads a kernel runs on: `threads` capped at Numba's pool; None: all."""
    return min(threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)


def set_threads(threads: int | None) -> None:
    """Use this many threads in the Numba kernels that run prange loops."""
    numba.set_num_threads(thread_count(threads))


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(workers, thread_name_prefix="seqpairs-kernel")


def in_parallel(kernel, tasks: int, threads: int | None, *args) -> None:
    """kernel(first, stop, *args), a nogil Numba function over its tasks first..stop-1,
    over every task 0..tasks-1 on thread_count(threads) threads at once (this one and a
    pool's), which take chunks in turn, each half a thread's share of what is left. A
    prange loop would do the same, but Numba's parfor pass took 8 of the 21 s that a first
    run of the example's distance stage spent compiling (benchmarks/RESULTS.md)."""
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
    work()
    for helper in helpers:
        helper.result()


def chunk_size(pairs: int, most: int = 256) -> int:
    """Pairs per parallel chunk: at least 8 chunks a thread, at most `most` pairs a chunk."""
    return max(1, min(most, pairs // (8 * numba.get_num_threads()) or 1))


def pair_kernel(codes, offsets, threads, batch, scheme_values, dtypes,
                finish=lambda *outputs: outputs):
    """The contract's kernel (pa, pb) -> finish(*outputs) over `batch`, a Numba function
    batch(codes, offsets, pa, pb, *scheme_values, *outputs, max_len, chunk) that fills one
    output array of each of `dtypes` per pair."""

    def align(pa, pb):
        pa = np.ascontiguousarray(pa, dtype=np.int64)
        pb = np.ascontiguousarray(pb, dtype=np.int64)
        outputs = [np.empty(len(pa), dtype=dtype) for dtype in dtypes]
        if len(pa):
            set_threads(threads)
            batch(codes, offsets, pa, pb, *scheme_values, *outputs, check_lengths(offsets),
                  chunk_size(len(pa)))
        return finish(*outputs)

    return align
