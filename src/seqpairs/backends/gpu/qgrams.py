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
ENTRY_ALIGN = 4  # entries a sequence's first is a multiple of: a 16-byte load (qgrams.cu)
ENTRY_SLOT_BITS = 16  # an entry's slot bits, also the largest bitset in shared memory
# qgram_shared's threads a block: its two bitsets (16 KiB) a block of 128 left an SM's L1
# cache 32 KiB, and the pairs' loads ran 2.4x slower (benchmarks/RESULTS.md)
SHARED_BLOCK = 256


class QGramCounts:
    """The contract's qgram_shared kernel on the current GPU: called with (pa, pb), int32
    counts; densest(pa, pb, least, density), float64 (backends/cpu/qgrams.QGramCounts)."""

    def __init__(self, codes, offsets, q: int, bits: int, threads=None):
        import cupy

        self.codes, self.offsets = cupy.asarray(codes), cupy.asarray(offsets)
        n = len(offsets) - 1
        words = max(1, (1 << bits) // 64)
        self.sets = cupy.zeros(n * words, dtype=cupy.uint64)
        # each sequence's positions as entries (qgrams.cu), its first at a multiple of
        # ENTRY_ALIGN, where the slots fit them and the bitsets shared memory
        self.with_entries = np.int32(bits <= ENTRY_SLOT_BITS)
        positions = np.maximum(np.diff(np.asarray(offsets)) - q + 1, 0)
        padded = -(-positions // ENTRY_ALIGN) * ENTRY_ALIGN
        self.entry_at = cupy.asarray(np.concatenate(([0], np.cumsum(padded))))
        self.entries = cupy.zeros(int(padded.sum()) if self.with_entries else 1,
                                  dtype=cupy.uint32)
        if n:
            VARIANTS["qgram_bitsets"].function_handle()(
                ((n + BLOCK - 1) // BLOCK,), (BLOCK,),
                (self.codes, self.offsets, np.int32(n), np.int32(q), np.int32(bits),
                 self.sets, self.with_entries, self.entry_at, self.entries))
        self.q, self.bits = np.int32(q), np.int32(bits)

    def _per_pair(self, pa, pb, poison, what, arguments, block=BLOCK):
        """One thread per pair over runs that fit the device, `block` threads a block:
        arguments(start, stop, pa, pb, out) -> (kernel, its arguments) for the run's pairs,
        which fills out (its dtype poison's, checked written)."""
        import cupy

        pa, pb, on_host = device_pairs(pa, pb)

        def launch(start, stop):
            m = stop - start
            out = cupy.full(m, poison)
            kernel, args = arguments(start, stop, pa[start:stop], pb[start:stop], out)
            kernel(((m + block - 1) // block,), (block,), args)
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
            return kernel, (self.codes, self.offsets, self.with_entries, self.entry_at,
                            self.entries, pa, pb, np.int32(len(pa)), self.q, self.bits,
                            self.sets, out)

        return self._per_pair(pa, pb, np.int32(-1), "q-gram counts", arguments, SHARED_BLOCK)

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
