"""`seqpairs scan`'s rows on the GPU (gpu_kernels/align.cu's scan_rows, a thread block of
SCAN_WARPS warps a block of the target): the same keys as backends/cpu/scan.py's rows."""
from __future__ import annotations

import numpy as np

from ..common import COLUMN_BITS, COLUMN_MASK
from .align import WORD_LETTERS, _scores
from .kernels import VARIANTS
from .launch import check_written, free_bytes, in_runs, to_device

# rows of blocks a call takes at most: keys, tile edges and scan_peaks' maxima (17 to 29
# bytes a row: 8.5 to 14.5 GiB)
ROWS_PER_CALL = 1 << 29
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


def _variant(scheme, longest: int, anchored: bool, **tuning):
    """scan_rows' variant for queries of up to `longest` letters (module constants)."""
    matrix = scheme.matrix()
    word = len(scheme.alphabet) <= WORD_LETTERS and -128 <= matrix.min() <= matrix.max() <= 127
    tiles = -(-longest // (32 * tuning.get("cols", COLS)))
    warps = next((w for w in WARPS if w >= tiles), WARPS[-1])
    key32 = max(int(matrix.max()), 0) * longest < KEY32_SCORES
    return VARIANTS[f"scan_rows_{'word' if word else 'table'}_{warps}"
                    f"{'_key32' if key32 else ''}{'_anchored' if anchored else ''}"
                    ].tuned(**tuning)


def slots(scheme, query_length: int, threads=None) -> int:
    """The contract's scan_slots on the current GPU: its multiprocessors times the thread
    blocks of scan_rows' variant that fit one (registers, threads, shared memory)."""
    import cupy

    variant = _variant(scheme, query_length, False)
    kernel = variant.function_handle()
    device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    warps = variant.defines["SCAN_WARPS"]
    warp_registers = -(-kernel.num_regs * 32 // 256) * 256  # allocated 256 at a time
    per_processor = min(device["regsPerMultiprocessor"] // (warp_registers * warps),
                        device["maxThreadsPerMultiProcessor"] // (32 * warps),
                        device["maxBlocksPerMultiProcessor"],
                        device["sharedMemPerMultiprocessor"] // (kernel.shared_size_bytes + 1024))
    return device["multiProcessorCount"] * max(per_processor, 1)


def covered(t_offsets, blocks) -> tuple[int, int]:
    """The stretch [start, stop) of the targets' letters (targets back to back) from the
    first letter that a block reads to the last ((0, 0): none): a block reads its
    target's letters lo .. hi - 1."""
    reading = blocks["hi"] > blocks["lo"]
    first = np.asarray(t_offsets, np.int64)[blocks["target"][reading]]
    if not len(first):
        return 0, 0
    return (int((first + blocks["lo"][reading]).min()),
            int((first + blocks["hi"][reading]).max()))


def _targets_on_device(t_codes, t_offsets, blocks):
    """The covered stretch of the targets on the device, and offsets shifted to match
    (those of targets no block reads may point outside it). Each call uploads only its
    blocks' stretch, so ranks that share a long target each upload their part of it."""
    start, stop = covered(t_offsets, blocks)
    return (to_device(np.asarray(t_codes)[start:stop]),
            to_device(np.asarray(t_offsets, np.int64) - start))


def rows(q_codes, q_offsets, t_codes, t_offsets, blocks, scheme, threads=None,
         anchored=False, **tuning):
    """The contract's scan_rows on the current GPU (a CuPy array, uint32 where the scores
    allow), launches of as many blocks as their edges and keys fit half the free memory,
    each a thread block of WARPS (as the longest query needs); tuning:
    kernels.Variant.tuned's scan_warps."""
    import cupy

    longest = int(np.diff(q_offsets).max(initial=1))
    variant = _variant(scheme, longest, anchored, **tuning)
    key32 = bool(variant.defines["KEY32"])
    kernel = variant.function_handle()
    threads_per_block = 32 * variant.defines["SCAN_WARPS"]
    spans = blocks["hi"] - blocks["lo"]
    base = np.r_[0, np.cumsum(spans)].astype(np.int64)
    poison = KEY32_POISON if key32 else KEY_POISON
    keys = cupy.full(int(base[-1]), poison, dtype=cupy.uint32 if key32 else cupy.int64)
    t_codes_on_device, t_offsets_on_device = _targets_on_device(t_codes, t_offsets, blocks)
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
               (*queries, t_codes_on_device, t_offsets_on_device,
                *(f[start:stop] for f in fields), cupy.asarray(base[start:stop] - base[start]),
                np.int32(stop - start), *_scores(scheme), edge, keys[int(base[start]):]))
        return ()

    in_runs(len(spans), run_end, launch, 1, "blocks of scan rows")
    check_written(keys == poison, keys.size, "row keys")
    return keys


def peaks(keys, blocks, top, min_score, threads=None):
    """The contract's scan_peaks on the GPU (gpu_kernels/scan_peaks.cu: each row decided by
    its window's maxima, then each block's best `top` by a sort), as host arrays."""
    import cupy

    spans = np.asarray(blocks["hi"] - blocks["lo"], np.int64)
    base_host = np.r_[0, np.cumsum(spans)].astype(np.int64)
    rows_total, nblocks = int(base_host[-1]), len(spans)
    found = [np.zeros((nblocks, top), np.int64) for _ in range(3)]
    kept = np.zeros(nblocks, np.int64)
    if not rows_total:
        return (*found, kept)
    suffix32 = "_key32" if keys.dtype == cupy.uint32 else ""
    width = np.maximum(np.asarray(blocks["half"], np.int64), 1)
    segments = -(-spans // width)
    first_segment = np.r_[0, np.cumsum(segments)].astype(np.int64)
    base = cupy.asarray(base_host)
    score_type = cupy.int32 if suffix32 else cupy.int64
    prefix, suffix = cupy.empty(rows_total, score_type), cupy.empty(rows_total, score_type)
    total_segments = int(first_segment[-1])
    VARIANTS[f"scan_segments{suffix32}"].function_handle()(
        (-(-total_segments // 128),), (128,),
        (keys, base, cupy.asarray(width), cupy.asarray(first_segment), np.int32(nblocks),
         np.int64(total_segments), prefix, suffix))
    peak = cupy.empty(rows_total, cupy.uint8)
    field = {key: cupy.asarray(np.ascontiguousarray(blocks[key], np.int64))
             for key in ("lo", "report_lo", "report_hi", "n", "half")}
    VARIANTS[f"scan_peaks{suffix32}"].function_handle()(
        (-(-rows_total // 256),), (256,),
        (keys, base, field["lo"], field["report_lo"], field["report_hi"], field["n"],
         field["half"], np.int32(nblocks), np.int64(rows_total), prefix, suffix,
         np.int64(min_score), peak))
    del prefix, suffix
    rows = cupy.flatnonzero(peak)
    block = cupy.searchsorted(base, rows, side="right") - 1
    key = keys[rows].astype(cupy.int64)
    score = key >> COLUMN_BITS
    tend = field["lo"][block] + 1 + rows - base[block]
    # each block's best first (ties: the earlier end), its first `top` kept
    order = cupy.lexsort(cupy.stack([tend, -score, block]))
    block, score, tend, key = (a[order] for a in (block, score, tend, key))
    first = cupy.searchsorted(block, cupy.arange(nblocks), side="left")
    rank = cupy.arange(len(block)) - first[block]
    keep = rank < top
    block, rank, score, tend, key = (a[keep].get() for a in (block, rank, score, tend, key))
    for out, values in zip(found, (score, tend, COLUMN_MASK - (key & COLUMN_MASK) + 1)):
        out[block, rank] = values
    np.add.at(kept, block, 1)
    return (*found, kept)
