"""`seqpairs scan`'s rows on the GPU (gpu_kernels/align.cu's scan_rows, a warp a block of
the target): the same keys as backends/cpu/scan.py's rows."""
from __future__ import annotations

import numpy as np

from .align import WORD_LETTERS, _scores
from .kernels import BLOCK, VARIANTS
from .launch import free_bytes

KEY_POISON = -1  # no row's key is negative: a key left so was not written


def rows(q_codes, q_offsets, t_codes, t_offsets, blocks, scheme, threads=None):
    """The contract's scan_rows on the current GPU (a CuPy array), launches of as many
    blocks as their edges and keys (16 bytes a row) fit half the free memory."""
    import cupy

    matrix = scheme.matrix()
    word = len(scheme.alphabet) <= WORD_LETTERS and -128 <= matrix.min() <= matrix.max() <= 127
    kernel = VARIANTS[f"scan_rows_{'word' if word else 'table'}"].function_handle()
    spans = blocks["hi"] - blocks["lo"]
    base = np.r_[0, np.cumsum(spans)].astype(np.int64)
    keys = cupy.full(int(base[-1]), KEY_POISON, dtype=cupy.int64)
    device = [cupy.asarray(a) for a in (q_codes, q_offsets, t_codes, t_offsets)]
    fields = [np.ascontiguousarray(blocks[key], np.int64)
              for key in ("query", "target", "lo", "hi")]
    budget = max(1, free_bytes() // 2 // 8)  # rows of edge (int2) a launch may hold
    warps = BLOCK // 32
    start = 0
    while start < len(spans):
        stop = start + 1
        while stop < len(spans) and base[stop + 1] - base[start] <= budget:
            stop += 1
        edge = cupy.empty(2 * int(base[stop] - base[start]), dtype=cupy.int32)
        local_base = cupy.asarray(base[start:stop] - base[start])
        count = stop - start
        kernel(((count + warps - 1) // warps,), (BLOCK,),
               (*device, *(cupy.asarray(f[start:stop]) for f in fields), local_base,
                np.int32(count), *_scores(scheme), edge, keys[int(base[start]):]))
        start = stop
    if len(keys) and bool((keys == KEY_POISON).any()):
        raise RuntimeError("scan_rows left row keys unwritten")
    return keys
