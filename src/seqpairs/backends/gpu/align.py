"""`seqpairs align`'s score-and-end and start passes on the GPU (gpu_kernels/align.cu), one
thread per pair: the same results as backends/cpu/align.py's ends and starts.

Few pairs, and long ones, take a warp each (align.cu's align_long; _run_all says which).
Otherwise local passes (forward and reverse) whose scores fit 16 bits (fits_16_bits) run
two pairs a thread in the halves of each word (align.cu's align_local_pairs; alphabets of
more than 4 letters with a per-thread profile in shared memory); the rest one pair a thread
in 32 bits. Pairs run with the most strips of columns first, then the most rows, then the
most columns (the query's and the target's letters; in the reverse pass those up to the
end), so that the threads of a warp walk as many strips and about as many rows; results go
back to the order given. Alphabets of up to 4 letters with int8 scores pick a column's
score with a byte permute (WORD), others look it up in a shared table.
"""
from __future__ import annotations

import weakref

import numpy as np

from ...errors import UserError
from ..alignments import window_runs
from ..common import runs_within
from .kernels import BLOCK, VARIANTS
from .launch import (
    INT_POISON,
    check_written,
    device_pairs,
    free_bytes,
    one_thread_per_pair,
    to_device,
)

WORD_LETTERS = 4  # align.cu's WORD: a column's scores against 4 target letters in a word
TABLE_ENTRIES = 1024  # align.cu's MAX_TABLE: (letters + 1) x letters
# Which pairs get a warp each (align_long), from bench_align_long.py on an H100
# (benchmarks/RESULTS.md): all of fewer than FILL_PAIRS pairs (a thread a pair leaves most
# of the GPU idle: 64 pairs of 500-4,000 bp ran 3-12x faster, 20,000 of 1,000 bp 1.8x),
# else those with a side of LONG_FROM letters or more (25,000 pairs of 4,000 bp: 1.6x);
# 80,000 pairs of 500 bp and 100,000 of 2,000 bp ran 1.5x faster a thread a pair.
FILL_PAIRS = 50_000
LONG_FROM = 4000
# window cells a trace_windows call holds at most: a byte of moves each a thread a window,
# half that a block a window (the 200 hits of a 4,096-letter scan, 3.4e9 cells, in one)
TRACE_CELLS = 1 << 32
ROW_BYTES = 8  # the strip edge's (H, E) per row and pair (two pairs a thread: + letters)


def fits_16_bits(scheme, m: int, n: int) -> bool:
    """Whether every value of the local passes over queries of up to m and targets of up to
    n letters fits a 16-bit half (align.cu's align_local_pairs): H from 0 to the best
    score, E and F from -(gap_open + gap_extend), a step from -128."""
    opening = scheme.gap_open + scheme.gap_extend
    return int(scheme.max_score(m, n)) <= 32767 and opening + scheme.gap_extend + 128 <= 32767


def variant(scheme, reverse: bool, mode=None, m: int = 0, n: int = 0, warp: bool = False):
    """The kernel variant for the scheme's alphabet and scores, the mode and the longest
    query and target (two local pairs a thread where 16 bits hold them); `warp`: a warp a
    pair (align_long)."""
    matrix = scheme.matrix()
    letters = len(scheme.alphabet)
    if (letters + 1) * letters > TABLE_ENTRIES:
        raise UserError(f"align: the GPU kernel takes alphabets of at most 31 letters, not "
                        f"{letters}")
    int8 = matrix.min() >= -128 and matrix.max() <= 127
    word = letters <= WORD_LETTERS and int8
    two = int8 and mode is not None and mode.local and fits_16_bits(scheme, m, n)
    fetch = "word" if word else "table"
    layout = f"long_{fetch}" if warp else ("pairs" if word else "pairs_profile") if two \
        else fetch
    return VARIANTS[f"align_{'starts' if reverse else 'ends'}_{layout}"]


class _Device:
    """The sequences on the device: codes, offsets, lengths."""

    def __init__(self, codes, offsets):
        import cupy

        self.codes = codes if isinstance(codes, cupy.ndarray) else to_device(codes)
        self.offsets = cupy.asarray(offsets)
        self.lengths = cupy.diff(self.offsets)


_LAST: list = []  # (codes, offsets) as weak references, and their _Device


def _sequences(codes, offsets) -> _Device:
    """The sequences on the device, uploaded once for the factories of the same (unchanged)
    arrays: the score-and-end and the start passes share them."""
    if _LAST and _LAST[0]() is codes and _LAST[1]() is offsets:
        return _LAST[2]
    seqs = _Device(codes, offsets)
    try:
        _LAST[:] = [weakref.ref(codes), weakref.ref(offsets), seqs]
    except TypeError:  # a type without weak references (a list): not kept
        _LAST.clear()
    return seqs


def _scores(scheme):
    """align.cu's scoring arguments: the substitution table on the device ([query
    letter][target letter], int32), its letters, the opening and extending costs."""
    import cupy

    return (cupy.asarray(np.ascontiguousarray(scheme.matrix(), dtype=np.int32).ravel()),
            np.int32(len(scheme.alphabet)), np.int32(scheme.gap_open + scheme.gap_extend),
            np.int32(scheme.gap_extend))


def _constants(scheme, mode):
    """_scores, then the mode (local, free target ends) and the largest substitution
    score (at least 0)."""
    return (*_scores(scheme), np.int32(mode.local), np.int32(mode.free_target_ends),
            np.int32(max(int(scheme.matrix().max()), 0)))


def _run(seqs: _Device, scheme, mode, pa, pb, reverse, inputs, max_batch=None, tuning=None):
    """align.cu over the pairs (device arrays), the largest first (module doc); returns
    three int32 device arrays in the pairs' order (REVERSE: the first unused)."""
    import cupy

    # the rows and columns each thread walks: the sequences', or (reverse) the prefixes up
    # to the end
    rows, columns = (inputs[2], inputs[1]) if reverse else (seqs.lengths[pb], seqs.lengths[pa])
    chosen = variant(scheme, reverse, mode, int(seqs.lengths[pa].max()),
                     int(seqs.lengths[pb].max())).tuned(**(tuning or {}))
    kernel = chosen.function_handle()
    # a warp's threads walk as many strips, then about as many rows
    strips = -(-columns // chosen.defines["STRIP"])
    order = cupy.lexsort(cupy.stack([-columns, -rows, -strips]))
    two = chosen.function == "align_local_pairs"
    profiles = 0  # dynamic shared memory: the threads' profiles (two pairs, large alphabets)
    if two and not chosen.defines["WORD"]:
        profiles = BLOCK * (2 * len(scheme.alphabet) * chosen.defines["STRIP"] // 16 + 1) * 16
        kernel.max_dynamic_shared_size_bytes = profiles
    d_inputs = [cupy.ascontiguousarray(a[order], dtype=cupy.int32) for a in inputs]
    d_pa, d_pb = pa[order], pb[order]
    position = cupy.arange(len(order), dtype=cupy.int64)
    constants = _constants(scheme, mode)

    # rows are target letters: one_thread_per_pair sizes the edge buffer by its first
    # index array's lengths, so it gets the targets first
    def launch(grid, block, targets, where, npairs, cells):
        queries = d_pa[where]
        outs = [cupy.full(npairs, INT_POISON, dtype=cupy.int32) for _ in range(3)]
        given = [a[where] for a in d_inputs] or [outs[0]] * 3
        if two:  # a thread for every two pairs, rows up to the longest target's + 4
            threads = -(-npairs // 2)
            rows = cells // npairs + 4
            edge = cupy.empty(rows * threads, dtype=cupy.uint64)
            row_letters = cupy.empty(rows * threads, dtype=cupy.uint16)
            snapshots = cupy.empty(threads * 2 * chosen.defines["STRIP"], dtype=cupy.uint32)
            kernel(((threads + block[0] - 1) // block[0],), block,
                   (seqs.codes, seqs.offsets, queries, targets, np.int32(npairs), *given,
                    *constants[:4], constants[-1], edge, row_letters, snapshots, *outs),
                   shared_mem=profiles)
            return outs
        bnd = cupy.empty(cells, dtype=cupy.int32), cupy.empty(cells, dtype=cupy.int32)
        kernel(grid, block, (seqs.codes, seqs.offsets, queries, targets, np.int32(npairs),
                             *given, *constants, *bnd, *outs))
        return outs

    results = one_thread_per_pair(seqs.lengths, d_pb, position, ROW_BYTES, max_batch, launch)
    return _in_given_order(results, order, reverse)


def _in_given_order(results, order, reverse):
    """The kernel's outputs (for the pairs in `order`), checked written (REVERSE: the
    starts), in the pairs' own order."""
    import cupy

    for values in results[1:] if reverse else results:
        check_written(values == INT_POISON, values.size, "alignment results")
    out = [cupy.empty(len(order), cupy.int32) for _ in range(3)]
    for placed, values in zip(out, results):
        placed[order] = values
    return out


def _run_long(seqs: _Device, scheme, mode, pa, pb, reverse, inputs):
    """align.cu's align_long (a warp a pair) over the pairs, as _run."""
    import cupy

    kernel = variant(scheme, reverse, warp=True).function_handle()
    rows, columns = (inputs[2], inputs[1]) if reverse else (seqs.lengths[pb], seqs.lengths[pa])
    order = cupy.argsort(-(rows.astype(cupy.int64) * columns))  # the longest first
    edge_rows = int(rows.max()) + 1
    given = [cupy.ascontiguousarray(a[order], dtype=cupy.int32) for a in inputs]
    out = [cupy.full(len(order), INT_POISON, dtype=cupy.int32) for _ in range(3)]
    constants = _constants(scheme, mode)
    step = max(1, free_bytes() // 2 // (edge_rows * 8))  # pairs whose edges fit a launch
    warps = BLOCK // 32
    for lo in range(0, len(order), step):
        part = slice(lo, lo + step)
        n = len(order[part])
        edge = cupy.empty(n * edge_rows * 2, dtype=cupy.int32)
        ins = [a[part] for a in given] or [out[0][part]] * 3
        kernel(((n + warps - 1) // warps,), (BLOCK,),
               (seqs.codes, seqs.offsets, pa[order[part]], pb[order[part]], np.int32(n), *ins,
                *constants, edge, np.int64(edge_rows), *(a[part] for a in out)))
    return _in_given_order(out, order, reverse)


def _run_all(seqs: _Device, scheme, mode, pa, pb, reverse, inputs, max_batch, tuning,
             long_from, fill_pairs):
    """Fewer than fill_pairs pairs all by align_long; else the pairs whose longer side (in
    the reverse pass: up to the end) has long_from letters or more by align_long, the rest
    by _run; results in the pairs' order."""
    import cupy

    rows, columns = (inputs[2], inputs[1]) if reverse else (seqs.lengths[pb], seqs.lengths[pa])
    long = (cupy.maximum(rows, columns) >= long_from) | (len(pa) < fill_pairs)
    if not bool(long.any()):
        return _run(seqs, scheme, mode, pa, pb, reverse, inputs, max_batch, tuning)
    out = [cupy.zeros(len(pa), cupy.int32) for _ in range(3)]
    for which, run in ((long, _run_long), (~long, None)):
        members = cupy.flatnonzero(which)
        if not len(members):
            continue
        args = (seqs, scheme, mode, pa[members], pb[members], reverse,
                [a[members] for a in inputs])
        part = run(*args) if run else _run(*args, max_batch, tuning)
        for placed, values in zip(out, part):
            placed[members] = values
    return out


def _device(a):
    import cupy

    return cupy.ascontiguousarray(cupy.asarray(a), dtype=cupy.int64)


def ends(codes, offsets, scheme, mode, threads=None, max_batch=None, long_from=LONG_FROM,
         fill_pairs=FILL_PAIRS, **tuning):
    """The contract's align_ends on the GPU (`threads` is ignored; `long_from`, `fill_pairs`:
    which pairs get a warp, _run_all; `tuning`: align.cu's STRIP and the register cap of
    the one-thread kernels, kernels.Variant.tuned)."""
    import cupy

    seqs = _sequences(codes, offsets)

    def align(pa, pb):
        pa, pb, on_host = device_pairs(pa, pb)
        out = [cupy.empty(0, cupy.int32)] * 3 if not len(pa) else \
            _run_all(seqs, scheme, mode, pa, pb, False, [], max_batch, tuning, long_from,
                     fill_pairs)
        return tuple(a.get() if on_host else a for a in out)

    return align


def starts(codes, offsets, scheme, mode, threads=None, max_batch=None, long_from=LONG_FROM,
           fill_pairs=FILL_PAIRS, **tuning):
    """The contract's align_starts on the GPU: the reverse pass for the pairs that need one
    (local pairs that align, semi-global pairs); global alignments start at 1, 1."""
    import cupy

    seqs = _sequences(codes, offsets)

    def align(pa, pb, score, qend, tend):
        pa, pb, on_host = device_pairs(pa, pb)
        score, qend, tend = (_device(a) for a in (score, qend, tend))
        qstart = cupy.zeros(len(pa), cupy.int32)
        tstart = cupy.zeros(len(pa), cupy.int32)
        if not mode.local and not mode.free_target_ends:
            qstart[:], tstart[:] = 1, 1
        else:
            need = cupy.flatnonzero(score > 0) if mode.local else cupy.arange(len(pa))
            if len(need):
                _, qs, ts = _run_all(seqs, scheme, mode, pa[need], pb[need], True,
                                     [score[need], qend[need], tend[need]], max_batch, tuning,
                                     long_from, fill_pairs)
                qstart[need], tstart[need] = qs, ts
        return tuple(a.get() if on_host else a for a in (qstart, tstart))

    return align


def trace_windows(codes, offsets, pa, pb, qstart, qend, tstart, tend, scheme, threads=None,
                  long_from=LONG_FROM, fill_pairs=FILL_PAIRS):
    """The contract's trace_windows on the GPU: the same runs and counts as
    backends/cpu/align.py's, as host arrays. Windows get a thread block each (align.cu's
    trace_long) by _run_all's rule (all of fewer than fill_pairs windows, else those with a
    side of long_from letters or more), the rest a thread each (align_trace)."""
    import cupy

    seqs = _sequences(codes, offsets)
    pa, pb, _ = device_pairs(pa, pb)
    coords = [_device(a) for a in (qstart, qend, tstart, tend)]
    m = cupy.maximum(coords[1] - cupy.maximum(coords[0], 1) + 1, 0)
    n = cupy.maximum(coords[3] - cupy.maximum(coords[2], 1) + 1, 0)
    room = cupy.zeros(len(pa) + 1, cupy.int64)
    cupy.cumsum(m + n, out=room[1:])
    total = int(room[-1])
    ops, lengths = cupy.empty(total, cupy.uint8), cupy.empty(total, cupy.int32)
    counts = cupy.full((len(pa), 5), INT_POISON, cupy.int64)
    block = ((cupy.maximum(m, n) >= long_from) | (len(pa) < fill_pairs)) & (m > 0) & (n > 0)
    args = (seqs, pa, pb, coords, m, n, _scores(scheme), room, ops, lengths, counts)
    _trace_by_thread(*args, cupy.flatnonzero(~block))
    _trace_by_block(*args, cupy.flatnonzero(block), len(scheme.alphabet) <= WORD_LETTERS and
                    -128 <= scheme.matrix().min() <= scheme.matrix().max() <= 127)
    check_written(counts[:, 0] == INT_POISON, len(pa), "alignments")
    return window_runs(room.get(), ops.get(), lengths.get(), counts.get())


def _trace_by_thread(seqs, pa, pb, coords, m, n, scores, room, ops, lengths, counts, which):
    """align_trace over the windows `which`: a byte of moves a cell."""
    import cupy

    if not len(which):
        return
    cells = cupy.zeros(len(pa), cupy.int64)
    cells[which] = (m[which] + 1) * (n[which] + 1)
    moves_at = cupy.zeros(len(pa) + 1, cupy.int64)
    cupy.cumsum(cells, out=moves_at[1:])
    columns = int(m[which].max()) + 1
    VARIANTS["align_trace"].function_handle()(
        ((len(which) + BLOCK - 1) // BLOCK,), (BLOCK,),
        (seqs.codes, seqs.offsets, pa, pb, np.int32(len(pa)), which, np.int32(len(which)),
         *coords, *scores, moves_at, cupy.empty(int(moves_at[-1]), cupy.uint8),
         cupy.empty(2 * columns * len(pa), cupy.int32), np.int32(columns), room, ops,
         lengths, counts))


def _trace_by_block(seqs, pa, pb, coords, m, n, scores, room, ops, lengths, counts, which,
                    word):
    """trace_long over the windows `which`: 4 bits of moves a cell, thread blocks of as many
    warps as the widest window's tiles of 32 x COLS query columns (up to 16), launches of
    as many windows as fit half the free memory."""
    import cupy

    if not len(which):
        return
    cols = VARIANTS["trace_long_word_1"].defines["COLS"]
    words = (n[which] * (-(-m[which] // cols))).get()  # each window's moves, 8 bytes a word
    rows = n[which].get() + 1
    tiles = -(-int(m[which].max()) // (32 * cols))
    warps = next((w for w in TRACE_WARPS if w >= tiles), TRACE_WARPS[-1])
    kernel = VARIANTS[f"trace_long_{'word' if word else 'table'}_{warps}"].function_handle()
    sizes = 8 * words + 8 * rows
    for lo, hi in runs_within(sizes, free_bytes() // 2):
        moves_at = np.r_[0, np.cumsum(words[lo:hi])].astype(np.int64)
        edge_at = np.r_[0, np.cumsum(rows[lo:hi])].astype(np.int64)
        kernel((hi - lo,), (32 * warps,),
               (seqs.codes, seqs.offsets, pa, pb, which[lo:hi], *coords, *scores,
                cupy.asarray(moves_at), cupy.empty(int(moves_at[-1]), cupy.uint64),
                cupy.asarray(edge_at), cupy.empty(2 * int(edge_at[-1]), cupy.int32), room, ops,
                lengths, counts))


TRACE_WARPS = (1, 2, 4, 8, 16)  # trace_long's variants (kernels.VARIANTS)

