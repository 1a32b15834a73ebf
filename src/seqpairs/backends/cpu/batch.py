"""Numba's thread pool as every CPU kernel uses it, and the wrapper of the one-pair-at-a-time
kernels (seqdist.py, affine.py): pairs in parallel chunks, outputs allocated per call."""
from __future__ import annotations

import numba
import numpy as np

from ..common import check_lengths


def set_threads(threads: int | None) -> None:
    """Use this many threads in the Numba kernels (capped at Numba's pool); None: all."""
    numba.set_num_threads(min(threads or numba.config.NUMBA_NUM_THREADS,
                              numba.config.NUMBA_NUM_THREADS))


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
