"""`seqpairs scan`'s rows on the GPU (gpu_kernels/align.cu's scan_rows, a thread block of
SCAN_WARPS warps a block of the target): the same keys as backends/cpu/scan.py's rows."""
from __future__ import annotations

import numpy as np

from .align import WORD_LETTERS, _scores, _sequences
from .kernels import VARIANTS
from .launch import check_written, free_bytes, in_runs

KEY_POISON = -1  # no row's key is negative: a key left so was not written
# keys of 32 bits (half the transfer, a third of a cell's work) where every score is below
# KEY32_SCORES: then no key reaches KEY32_POISON
KEY32_SCORES = (1 << 17) - 1
KEY32_POISON = 0xFFFF_FFFF
# align.cu's columns a lane (the table's): a warp's tile is 32 x COLS query columns
COLS = VARIANTS["scan_rows_word_2"].defines["COLS"]
# scan_rows' warps a thread block: the fewest that take the longest query's tiles in one
# round, up to 16 (idle warps cost: a 1,024-letter query on 16 warps of 256 columns ran
# at 227 GCUPS on an H100, on 4 at 616; benchmarks/RESULTS.md)
WARPS = (2, 4, 8, 16)


def rows(q_codes, q_offsets, t_codes, t_offsets, blocks, scheme, threads=None,
         anchored=False, **tuning):
    """The contract's scan_rows on the current GPU (a CuPy array, uint32 where the scores
    allow), launches of as many blocks as their edges and keys fit half the free memory,
    each a thread block of WARPS (as the longest query needs); tuning:
    kernels.Variant.tuned's scan_warps."""
    import cupy

    matrix = scheme.matrix()
    word = len(scheme.alphabet) <= WORD_LETTERS and -128 <= matrix.min() <= matrix.max() <= 127
    longest = int(np.diff(q_offsets).max(initial=1))
    tiles = -(-longest // (32 * tuning.get("cols", COLS)))
    warps = next((w for w in WARPS if w >= tiles), WARPS[-1])
    key32 = max(int(matrix.max()), 0) * longest < KEY32_SCORES
    variant = VARIANTS[f"scan_rows_{'word' if word else 'table'}_{warps}"
                       f"{'_key32' if key32 else ''}{'_anchored' if anchored else ''}"
                       ].tuned(**tuning)
    kernel = variant.function_handle()
    threads_per_block = 32 * variant.defines["SCAN_WARPS"]
    spans = blocks["hi"] - blocks["lo"]
    base = np.r_[0, np.cumsum(spans)].astype(np.int64)
    poison = KEY32_POISON if key32 else KEY_POISON
    keys = cupy.full(int(base[-1]), poison, dtype=cupy.uint32 if key32 else cupy.int64)
    targets = _sequences(t_codes, t_offsets)  # uploaded once for all the calls of a scan
    queries = [cupy.asarray(q_codes), cupy.asarray(q_offsets)]
    fields = [cupy.asarray(np.ascontiguousarray(blocks[key], np.int64))
              for key in ("query", "target", "lo", "hi")]
    budget = free_bytes() // 2 // 8  # rows of edge (int2) a launch may hold

    def run_end(start, most):  # the blocks from start whose edges fit, at least one
        fitting = int(np.searchsorted(base, base[start] + budget, "right")) - 1
        return min(start + most, max(start + 1, fitting))

    def launch(start, stop):
        edge = cupy.empty(2 * int(base[stop] - base[start]), dtype=cupy.int32)
        kernel((stop - start,), (threads_per_block,),
               (*queries, targets.codes, targets.offsets,
                *(f[start:stop] for f in fields), cupy.asarray(base[start:stop] - base[start]),
                np.int32(stop - start), *_scores(scheme), edge, keys[int(base[start]):]))
        return ()

    in_runs(len(spans), run_end, launch, 1, "blocks of scan rows")
    check_written(keys == poison, keys.size, "row keys")
    return keys
