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


class QGramCounts:
    """The contract's qgram_shared kernel on the current GPU: called with (pa, pb), int32
    counts; densest(pa, pb, least, density), float64 (backends/cpu/qgrams.QGramCounts)."""

    def __init__(self, codes, offsets, q: int, bits: int, threads=None):
        import cupy

        self.codes, self.offsets = cupy.asarray(codes), cupy.asarray(offsets)
        n = len(offsets) - 1
        words = max(1, (1 << bits) // 64)
        self.sets = cupy.zeros(n * words, dtype=cupy.uint64)
        # 1: a slot's first position (qgrams.cu)
        self.first = cupy.zeros(len(codes), dtype=cupy.uint8)
        if n:
            VARIANTS["qgram_bitsets"].function_handle()(
                ((n + BLOCK - 1) // BLOCK,), (BLOCK,),
                (self.codes, self.offsets, np.int32(n), np.int32(q), np.int32(bits),
                 self.sets, self.first))
        self.q, self.bits = np.int32(q), np.int32(bits)

    def _per_pair(self, pa, pb, poison, what, arguments):
        """One thread per pair over runs that fit the device: arguments(start, stop, pa, pb,
        out) -> (kernel, its arguments) for the run's pairs, which fills out (its dtype
        poison's, checked written)."""
        import cupy

        pa, pb, on_host = device_pairs(pa, pb)

        def launch(start, stop):
            m = stop - start
            out = cupy.full(m, poison)
            kernel, args = arguments(start, stop, pa[start:stop], pb[start:stop], out)
            kernel(((m + BLOCK - 1) // BLOCK,), (BLOCK,), args)
            return (out,)

        if len(pa):
            (out,) = runs(len(pa), PAIR_BYTES, launch, "pairs")
            check_written(out < 0 if poison.dtype.kind == "i" else cupy.isnan(out), len(pa),
                          what)
        else:
            out = cupy.empty(0, dtype=poison.dtype)
        return out.get() if on_host else out

    def __call__(self, pa, pb):
        kernel = VARIANTS["qgram_shared"].function_handle()

        def arguments(start, stop, pa, pb, out):
            return kernel, (self.codes, self.offsets, self.first, pa, pb, np.int32(len(pa)),
                            self.q, self.bits, self.sets, out)

        return self._per_pair(pa, pb, np.int32(-1), "q-gram counts", arguments)

    def densest(self, pa, pb, least, density: float):
        import cupy

        kernel = VARIANTS["qgram_densest"].function_handle()
        pa, pb, on_host = device_pairs(pa, pb)
        # the pairs by B, so that a warp's threads read B's bitset together: the pruner's
        # pairs (a batch's suspects) read scattered bitsets on both sides, 27 ns a pair on
        # an H200 against 12.5 in this order (benchmarks/RESULTS.md)
        order = cupy.argsort(pb)
        least = cupy.ascontiguousarray(cupy.asarray(least)[order], dtype=cupy.int64)

        def arguments(start, stop, pa, pb, out):
            return kernel, (self.codes, self.offsets, pa, pb, least[start:stop],
                            np.int32(len(pa)), self.q, self.bits, np.float64(density),
                            self.sets, out)

        out = cupy.empty(len(pa), dtype=cupy.float64)
        out[order] = self._per_pair(pa[order], pb[order], np.float64(np.nan),
                                    "densest windows", arguments)
        return out.get() if on_host else out
