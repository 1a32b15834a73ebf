"""The q-gram counts of exact pruning's counting filter on the GPU (gpu_kernels/qgrams.cu),
what backends/cpu/qgrams.py computes (docs/pruning.md)."""
from __future__ import annotations

import numpy as np

from .band import runs
from .kernels import BLOCK, VARIANTS
from .launch import PAIR_BYTES, check_written, device_pairs

# Bytes for all sequences' bitsets: whole 8-gram bitsets (8 KiB) up to 2^18 sequences. At
# 64 MiB, 2^18 sequences had 2^11 bits each, and the counting filter dropped 60% of a
# 16S-like community's pairs instead of 87% (benchmarks/RESULTS.md, "q-gram bitsets").
MEMORY = 2 << 30


def counter(codes, offsets, q: int, bits: int, threads=None):
    """The contract's qgram_shared kernel on the current GPU: (pa, pb) -> int32 counts."""
    import cupy

    d_codes, d_offsets = cupy.asarray(codes), cupy.asarray(offsets)
    n = len(offsets) - 1
    words = max(1, (1 << bits) // 64)
    sets = cupy.zeros(n * words, dtype=cupy.uint64)
    first = cupy.zeros(len(codes), dtype=cupy.uint8)  # 1: a slot's first position (qgrams.cu)
    if n:
        VARIANTS["qgram_bitsets"].function_handle()(
            ((n + BLOCK - 1) // BLOCK,), (BLOCK,),
            (d_codes, d_offsets, np.int32(n), np.int32(q), np.int32(bits), sets, first))
    kernel = VARIANTS["qgram_shared"].function_handle()

    def shared(pa, pb):
        pa, pb, on_host = device_pairs(pa, pb)

        def launch(start, stop):
            m = stop - start
            out = cupy.full(m, -1, dtype=cupy.int32)
            kernel(((m + BLOCK - 1) // BLOCK,), (BLOCK,),
                   (d_codes, d_offsets, first, pa[start:stop], pb[start:stop], np.int32(m),
                    np.int32(q), np.int32(bits), sets, out))
            return (out,)

        if len(pa):
            (out,) = runs(len(pa), PAIR_BYTES, launch, "pairs")
            check_written(out < 0, len(pa), "q-gram counts")
        else:
            out = cupy.empty(0, dtype=cupy.int32)
        return out.get() if on_host else out

    return shared
