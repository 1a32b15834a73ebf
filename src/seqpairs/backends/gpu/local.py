"""The PSSE kernel on the GPU (gpu_kernels/local.cu): the same scores as backends/cpu/local.py.

Every block of a launch works on one pair, one thread per shuffle: two of the pair's
slots (the target, then its shuffles) per thread in 16-bit lanes, or one in 32 bits for a
pair whose score could pass the lanes' range (`fits_16_bits`). Shuffles are made on the
device from the RNG key (seed, pair key, shuffle). Pairs go costliest (m x n) first, in
launches whose scratch (each thread's shuffled letters and strip edge, up to 10 bytes a
row) fits half the free device memory (launch.in_runs). Outputs are poisoned and checked
written. Kernel variants (kernels.VARIANTS: local_16_word, local_16_int8, local_32) hold
the widest strip that fits their register cap without spilling (ptxas, sm_90).
"""
from __future__ import annotations

import numpy as np

from ...errors import UserError
from ..common import check_local_inputs, concatenate
from .kernels import VARIANTS
from .launch import INT_POISON, check_written, free_bytes, in_runs

# Word profile (one ready score word per lane letter combination, (K + 1)^2 of them with
# two lanes) up to this many combinations: ACGT's 25; larger alphabets use the int8 profile.
WORD_PROFILE_MAX = 64
EDGE_BYTES = 8  # (H, E) per row and thread
SHARED_MAX = 48 * 1024  # shared memory per block without opting in
MAX_GRID_Y = 65535  # pairs per launch


def lane_zero(scheme) -> int:
    """How a 16-bit lane holds 0 (local.cu: every value v as v + zero): values from
    -B = -max(open + 2 extend, 128) up to 65535 - B fit."""
    return max(scheme.gap_open + 2 * scheme.gap_extend, 128) - 32768


def fits_16_bits(scheme, m, n):
    """Whether pairs of these lengths cannot score past the 16-bit lanes' range."""
    return scheme.max_score(m, n) <= 32767 - lane_zero(scheme)


def _profile_bytes(letters: int, lanes: int, word: bool, strip: int) -> int:
    """Shared memory of the strip profile (rows padded to an odd number of 16-byte units)."""
    codes = letters + 1  # with the pad code
    if word:
        return codes**lanes * ((strip // 4) | 1) * 16
    return codes * ((strip // 16) | 1) * 16


def _run_end(order, n, pair_threads: int, row_bytes: int, budget: int):
    """run_end(start, most) for launch.in_runs over `order`: the longest run from start, of at
    most `most` pairs (and MAX_GRID_Y), whose scratch, (longest target, rounded up to even,
    + 1) rows of row_bytes per thread, fits `budget` bytes; at least one pair."""
    rows = (n[order] + 1) // 2 * 2 + 1

    def run_end(start, most):
        stop, longest = start + 1, rows[start]
        limit = min(len(order), start + most, start + MAX_GRID_Y)
        while stop < limit and (stop - start + 1) * pair_threads * max(longest, rows[stop]) \
                * row_bytes <= budget:
            longest = max(longest, rows[stop])
            stop += 1
        return stop

    return run_end, rows


def local_scores(scheme, queries: list[np.ndarray], targets: list[np.ndarray],
                 pairs: np.ndarray, shuffles: int, seed: int, threads: int | None = None, *,
                 word_profile: bool | None = None, max_batch_bytes: int | None = None,
                 **tuning) -> tuple[np.ndarray, np.ndarray]:
    """Best local scores of queries[k] against targets[k] and against its shuffles, on the GPU.

    Same arguments and results as backends.cpu.local.local_scores (`threads` is ignored).
    Keywords tune the kernel: word_profile (None: by alphabet size), max_batch_bytes
    (scratch per launch; None: half the free device memory) and kernels.Variant.tuned's
    strip (a multiple of 4, of 16 with the int8 profile), block, max_registers.
    """
    import cupy

    queries, targets, pairs = check_local_inputs(scheme, queries, targets, pairs, shuffles,
                                                 seed)
    matrix = scheme.matrix()
    if matrix.min() < -128 or matrix.max() > 127:
        raise UserError("psse: the GPU kernel needs substitution scores between -128 and 127")
    slots = shuffles + 1
    if not len(pairs):
        return np.zeros(0, dtype=np.int32), np.zeros((0, shuffles), dtype=np.int32)
    q_codes, q_offsets = concatenate(queries)
    t_codes, t_offsets = concatenate(targets)
    m, n = np.diff(q_offsets), np.diff(t_offsets)
    narrow = fits_16_bits(scheme, m, n)
    device = [cupy.asarray(a) for a in (q_codes, q_offsets, t_codes, t_offsets, pairs)]
    d_subst = cupy.asarray(matrix.ravel())
    d_out = cupy.full(len(pairs) * slots, INT_POISON, dtype=cupy.int32)
    letters = len(scheme.alphabet)
    constants = (np.int32(slots), d_subst, np.int32(letters), np.int32(scheme.gap_open),
                 np.int32(scheme.gap_extend), np.uint64(seed))
    for lanes, members in ((2, np.flatnonzero(narrow)), (1, np.flatnonzero(~narrow))):
        if not members.size:
            continue
        word = lanes == 1 or ((letters + 1) ** 2 <= WORD_PROFILE_MAX if word_profile is None
                              else word_profile)
        variant = VARIANTS["local_32" if lanes == 1 else
                           "local_16_word" if word else "local_16_int8"].tuned(**tuning)
        width, block = variant.defines["STRIP"], variant.defines["BLOCK"]
        shared = _profile_bytes(letters, lanes, word, width)
        if shared > SHARED_MAX:
            raise ValueError(f"the strip profile needs {shared} bytes of shared memory")
        kernel = variant.function_handle()
        blocks = -(-slots // (lanes * block))  # per pair
        order = members[np.argsort(-(m * n)[members], kind="stable")]
        budget = max_batch_bytes or free_bytes() // 2
        run_end, rows = _run_end(order, n, blocks * block, lanes + EDGE_BYTES, budget)

        def launch(start, stop):
            batch, run_rows = order[start:stop], int(rows[start:stop].max())
            threads_total = len(batch) * blocks * block
            scratch = cupy.empty(run_rows * threads_total, dtype=cupy.uint8 if lanes == 1
                                 else cupy.uint16)
            edge = cupy.empty(2 * run_rows * threads_total, dtype=cupy.uint32)
            kernel((blocks, len(batch)), (block,),
                   (*device[:4], cupy.asarray(batch), device[4], *constants,
                    np.int32(lane_zero(scheme) if lanes == 2 else 0), np.int32(run_rows),
                    scratch, edge, d_out),
                   shared_mem=shared)
            return ()

        in_runs(len(order), run_end, launch, 1, "pairs of PSSE work")
    check_written(d_out == INT_POISON, d_out.size, "scores")
    out = d_out.get().reshape(len(pairs), slots)
    return out[:, 0].copy(), out[:, 1:].copy()
