"""The affine global alignment kernels on the GPU: score and length of each pair under an
AffineScheme (gpu_kernels/affine.cu), the same as backends/cpu/affine.py; the alignment
vsearch's traceback takes, or its counts alone (gpu_kernels/affine_trace.cu), the same as
backends/cpu/trace_affine.py's."""
from __future__ import annotations

import numpy as np

from ...errors import UserError
from ...scoring.affine import NEG
from ..alignments import COUNTS, ScoredAlignments
from ..common import AFFINE_COUNTS, check_lengths
from .kernels import BLOCK, VARIANTS
from .launch import INT_POISON, check_written, device_pairs, one_thread_per_pair

MAX_LETTERS = 32  # affine_trace.cu's shared table (TABLE 1), affine_screen.cu's profile


def neg_score_32(scheme) -> int:
    """The score of an impossible state in 16 bits: an extension below it must not wrap."""
    return -(2**15) + max(scheme.gap_extend, scheme.end_extend) + 1


def packed_width(scheme, max_len: int) -> int:
    """32 when every value affine.cu computes for sequences up to max_len bp has a score
    within 16 bits above the impossible state's (AffineScheme.score_bounds), else 64."""
    lowest, highest = scheme.score_bounds(max_len)
    return 32 if lowest > neg_score_32(scheme) and highest < 2**15 else 64


# Time per computed cell of each strip (with its AHEAD), relative: 36 took 0.88-0.91 of
# 40's on an H200 at 250 and 400 bp, the 32-bit builds (benchmarks/RESULTS.md, "Boundaries
# read rows ahead"); the 64-bit builds take the same choice, unmeasured.
CELL_TIME = {40: 1.0, 36: 0.9}


def least_padding(variants, la, lb):
    """The variant whose strip computes the launch's cells soonest: a pair's columns are
    computed in whole strips (la * lb rounded up to the strip), each at its CELL_TIME;
    ties: the first."""
    if len(variants) == 1:
        return variants[0]
    times = [CELL_TIME[strip] * int((la * ((lb + strip - 1) // strip * strip)).sum())
             for strip in (v.defines["STRIP"] for v in variants)]
    return variants[times.index(min(times))]


def device_inputs(codes, offsets, scheme):
    """(longest sequence's length, codes, offsets, lengths, substitution table) on the
    device, for a kernel that packs a column's four substitution scores in one word:
    UserError unless they fit int8."""
    import cupy

    max_len = check_lengths(offsets)
    matrix = scheme.matrix()
    if matrix.min() < -128 or matrix.max() > 127:
        raise UserError("the GPU kernel needs substitution scores between -128 and 127")
    d_offsets = cupy.asarray(offsets)
    return (max_len, cupy.asarray(codes), d_offsets, cupy.diff(d_offsets),
            cupy.asarray(np.ascontiguousarray(matrix, dtype=np.int32).ravel()))


def aligner(codes, offsets, scheme, threads=None, *, max_batch=None, **tuning):
    """The contract's affine kernel on the current GPU: (pa, pb) -> (score, length) int32.

    Substitution scores must fit int8 (the kernel packs a column's four scores in one
    word). States are packed in 32 bits when packed_width() allows it for the longest
    sequence, else in 64. Each launch takes the strip that pads its pairs least
    (least_padding), unless `tuning` (strip, max_registers: kernels.Variant.tuned) fixes
    the variant.
    """
    import cupy

    if len(scheme.alphabet) != 4:
        raise UserError("the GPU affine score kernel holds four letters (DNA); the scheme "
                        f"has {len(scheme.alphabet)}")
    max_len, d_codes, d_offsets, lengths, d_subst = device_inputs(codes, offsets, scheme)
    width = packed_width(scheme, max_len)
    packed = np.int32 if width == 32 else np.int64
    shift, neg = (16, neg_score_32(scheme)) if width == 32 else (32, NEG)
    # a strip per launch (VARIANTS' rows of this width), unless `tuning` names one
    variants = ([VARIANTS[f"affine_{width}"].tuned(**tuning)] if tuning else
                [VARIANTS[f"affine_{width}"], VARIANTS[f"affine_{width}_narrow"]])
    steps = tuple(packed(c << shift) for c in (
        scheme.gap_open + scheme.gap_extend, scheme.gap_extend,
        scheme.end_open + scheme.end_extend, scheme.end_extend))
    ends = (np.int32(scheme.end_open), np.int32(scheme.end_extend), packed(neg << shift))
    row_bytes = 2 * np.dtype(packed).itemsize  # H and E

    def launch(grid, block, d_pa, d_pb, m, rows_total):
        kernel = least_padding(variants, lengths[d_pa], lengths[d_pb]).function_handle()
        d_score = cupy.full(m, INT_POISON, dtype=cupy.int32)
        d_length = cupy.full(m, INT_POISON, dtype=cupy.int32)
        kernel(grid, block, (
            d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst, *steps, *ends,
            cupy.empty(rows_total, dtype=packed), cupy.empty(rows_total, dtype=packed),
            d_score, d_length))
        return d_score, d_length

    def align(pa, pb):
        pa, pb, on_host = device_pairs(pa, pb)
        if len(pa) == 0:
            score = length = cupy.empty(0, dtype=cupy.int32)
        else:
            score, length = one_thread_per_pair(lengths, pa, pb, row_bytes, max_batch, launch)
            check_written(length == INT_POISON, len(pa), "results")
        return (score.get(), length.get()) if on_host else (score, length)

    return align


def by_column_sequence(pa, pb, lengths):
    """The pairs ordered by B, then A's length, each B's run padded to whole blocks with
    copies of its last pair (affine_screen.cu: a block's pairs share B); (pa, pb, where),
    where: each given pair's position among them."""
    import cupy

    order = cupy.lexsort(cupy.stack((lengths[pa], pb)))
    spa, spb = pa[order], pb[order]
    starts = cupy.flatnonzero(cupy.diff(spb, prepend=-1))
    runs = cupy.diff(cupy.append(starts, len(spb)))
    padded = -(-runs // BLOCK) * BLOCK
    padded_starts = cupy.cumsum(padded) - padded
    slots = int(padded.sum())
    run = cupy.searchsorted(starts, cupy.arange(len(spb)), side="right") - 1
    at = padded_starts[run] + cupy.arange(len(spb)) - starts[run]
    # padding: its run's last pair
    slot_run = cupy.searchsorted(padded_starts, cupy.arange(slots), side="right") - 1
    source = (starts + runs - 1)[slot_run]
    source[at] = cupy.arange(len(spb))
    where = cupy.empty_like(at)
    where[order] = at
    return spa[source], spb[source], where


def screener(codes, offsets, scheme, threads=None, *, max_batch=None, **tuning):
    """The contract's affine_screen on the current GPU: (pa, pb, alpha, beta) -> score and
    weight (int32): the optimal score of each pair (pa[k] as A) and the largest alpha x
    matches - beta x mismatches among its alignments with that score (gpu_kernels/
    affine_screen.cu); None where the scheme's alphabet or scores do not fit the kernel
    (more than 32 letters, scores beyond 16 bits). Weights: max(alpha, beta) x the longest
    sequence below 2^15. `tuning` (strip, load, max_registers: kernels.Variant.tuned)
    changes the kernel's variant."""
    import cupy

    max_len, d_codes, d_offsets, lengths, d_subst = device_inputs(codes, offsets, scheme)
    letters = len(scheme.alphabet)
    if letters > MAX_LETTERS or packed_width(scheme, max_len) != 32:
        return None
    kernel = VARIANTS["affine_screen"].tuned(**tuning).function_handle()
    steps = tuple(np.int32(c << 16) for c in (
        scheme.gap_open + scheme.gap_extend, scheme.gap_extend,
        scheme.end_open + scheme.end_extend, scheme.end_extend))
    ends = (np.int32(scheme.end_open), np.int32(scheme.end_extend),
            np.int32(neg_score_32(scheme) << 16))

    def screen(pa, pb, alpha: int, beta: int):
        if max(alpha, beta) * max_len >= 2**15:
            raise ValueError(f"weights {alpha}, {beta} pass 16 bits at {max_len} letters")
        pa, pb, on_host = device_pairs(pa, pb)
        if len(pa) == 0:
            return (np.empty(0, np.int32),) * 2 if on_host else (cupy.empty(0, cupy.int32),) * 2
        gpa, gpb, where = by_column_sequence(pa, pb, lengths)

        def launch(grid, block, d_pa, d_pb, m, rows_total):
            score = cupy.full(m, INT_POISON, dtype=cupy.int32)
            weight = cupy.empty(m, dtype=cupy.int32)
            kernel(grid, block, (d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst,
                                 np.int32(letters), np.int32(alpha), np.int32(beta), *steps,
                                 *ends, cupy.empty(rows_total, dtype=cupy.int32),
                                 cupy.empty(rows_total, dtype=cupy.int32), score, weight))
            return score, weight

        score, weight = one_thread_per_pair(lengths, gpa, gpb, 8, max_batch, launch)
        check_written(score == INT_POISON, len(gpa), "results")
        found = (score[where], weight[where])
        return tuple(a.get() for a in found) if on_host else found

    return screen


def traced(codes, offsets, scheme, max_batch, runs: bool):
    """(pa, pb) -> device arrays of gpu_kernels/affine_trace.cu for the pairs (pa[k] as A,
    pb[k] as B): score (int32), counts (int32, pairs x alignments.COUNTS) and, with `runs`,
    the runs of all pairs back to back and each pair's number of runs (int64)."""
    import cupy

    letters = len(scheme.alphabet)
    if letters > MAX_LETTERS:
        raise UserError(f"the GPU traceback holds alphabets of up to {MAX_LETTERS} letters; "
                        f"the scheme has {letters}")
    _, d_codes, d_offsets, lengths, d_subst = device_inputs(codes, offsets, scheme)
    # four letters: their scores packed in a word per column; more: the table
    variant = VARIANTS[f"affine_trace{'' if runs else '_counts'}"
                       f"{'' if letters == 4 else '_table'}"]
    kernel, strip = variant.function_handle(), variant.defines["STRIP"]
    costs = tuple(np.int32(c) for c in (
        scheme.gap_open + scheme.gap_extend, scheme.gap_extend,
        scheme.end_open + scheme.end_extend, scheme.end_extend, scheme.end_open,
        scheme.end_extend))

    def launch_all(pa, pb):
        la, lb = lengths[pa], lengths[pb]
        max_la, max_lb = int(la.max()), int(lb.max())
        words = -(-max_lb // strip)  # moves words per row
        # a row of A: its boundary (H, E) and moves; a pair's run slots (la + lb) and
        # outputs spread over its rows
        row_bytes = 8 + 4 * words + -(-4 * (max_la + max_lb + len(COUNTS) + 3)
                                      // (max_la + 1))

        def launch(grid, block, d_pa, d_pb, m, rows_total):
            score = cupy.full(m, INT_POISON, dtype=cupy.int32)
            counts = cupy.empty((m, len(COUNTS)), dtype=cupy.int32)
            work = (cupy.empty(2 * rows_total, dtype=cupy.int32), np.int64(rows_total),
                    cupy.empty((rows_total // m - 1) * words * m, dtype=cupy.uint32),
                    np.int64(words))
            inputs = (d_codes, d_offsets, d_pa, d_pb, np.int32(m), d_subst, np.int32(letters),
                      *costs, *work)
            if not runs:
                kernel(grid, block, (*inputs, counts, score))
                return score, counts
            slots = lengths[d_pa] + lengths[d_pb]
            run_start = cupy.cumsum(slots) - slots
            slot_runs = cupy.empty(int(slots.sum()), dtype=cupy.int32)
            n_runs = cupy.zeros(m, dtype=cupy.int32)
            kernel(grid, block, (*inputs, run_start, slot_runs, n_runs, counts, score))
            n_runs = n_runs.astype(cupy.int64)
            first = cupy.repeat(run_start - (cupy.cumsum(n_runs) - n_runs), n_runs)
            return score, counts, slot_runs[first + cupy.arange(int(n_runs.sum()))], n_runs

        outputs = one_thread_per_pair(lengths, pa, pb, row_bytes, max_batch, launch)
        check_written(outputs[0] == INT_POISON, len(pa), "results")
        return outputs

    def run(pa, pb):
        if len(pa) == 0:
            return ((cupy.empty(0, cupy.int32), cupy.empty((0, len(COUNTS)), cupy.int32))
                    + ((cupy.empty(0, cupy.int32), cupy.empty(0, cupy.int64)) if runs else ()))
        return launch_all(pa, pb)

    return run, lengths


def counter(codes, offsets, scheme, threads=None, *, max_batch=None):
    """The contract's affine_counts kernel on the current GPU: (pa, pb) -> the AFFINE_COUNTS
    (int32) of the alignment vsearch's traceback takes, the CPU backend's (the traceback of
    gpu_kernels/affine_trace.cu without its runs). Substitution scores must fit int8."""
    run, _ = traced(codes, offsets, scheme, max_batch, runs=False)
    columns = [COUNTS.index(name) for name in AFFINE_COUNTS[1:]]

    def count(pa, pb):
        pa, pb, on_host = device_pairs(pa, pb)
        score, counts = run(pa, pb)
        found = (score, *(counts[:, c].copy() for c in columns))
        return tuple(c.get() for c in found) if on_host else found

    return count


def tracer(codes, offsets, scheme, threads=None, *, max_batch=None):
    """The contract's trace_affine on the current GPU, as a function (pa, pb) ->
    alignments.ScoredAlignments (host arrays) of the pairs (pa[k] as A, the query; pb[k]
    as B, the target), traced with vsearch's tie rules (gpu_kernels/affine_trace.cu): the
    CPU backend's counts, runs and scores. Substitution scores must fit int8."""
    run, lengths = traced(codes, offsets, scheme, max_batch, runs=True)

    def trace(pa, pb):
        pa, pb, _ = device_pairs(pa, pb)
        score, counts, runs, n_runs = (a.get() for a in run(pa, pb))
        run_offsets = np.concatenate(([0], np.cumsum(n_runs))).astype(np.int64)
        return ScoredAlignments(counts, runs, run_offsets, lengths[pa].get(),
                                lengths[pb].get(), score)

    return trace
