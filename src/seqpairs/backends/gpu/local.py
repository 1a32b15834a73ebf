"""The PSSE kernel on the GPU (gpu_kernels/local.cu): the same scores as backends/cpu/local.py.

Every block of a launch works on one group of pairs sharing a target (common.target_groups),
one thread per shuffle: two of the target's slots (the target, then its shuffles) per
thread in 16-bit lanes, or one in 32 bits for pairs whose score could pass the lanes' range
(`fits_16_bits`). Shuffles are made on the device from the RNG key (seed, target key,
shuffle), once per block, and serve each query of the group in turn. Groups go costliest
(sum of m x n) first, in launches whose scratch (each thread's shuffled letters and strip
edge, up to 10 bytes a row) fits half the free device memory (launch.in_runs): the tiles
that bound GPU memory. Outputs are poisoned and checked
written. Kernel variants (kernels.VARIANTS: local_16_word, local_16_int8, local_32) hold
the widest strip that fits their register cap without spilling (ptxas, sm_90).
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ...errors import UserError
from ..common import check_local_inputs, concatenate, target_groups
from .kernels import VARIANTS
from .launch import INT_POISON, check_written, free_bytes, in_runs

log = logging.getLogger("seqpairs.gpu")

# Word profile (one ready score word per lane letter combination, (K + 1)^2 of them with
# two lanes) up to this many combinations: ACGT's 25; larger alphabets use the int8 profile.
WORD_PROFILE_MAX = 64
EDGE_BYTES = 8  # (H, E) per row and thread
SHARED_MAX = 48 * 1024  # shared memory per block without opting in
MAX_GRID_Y = 65535  # groups per launch
GROUP_PAIRS = 16  # queries sharing a block's shuffles of their target at most


def lane_zero(scheme) -> int:
    """How a 16-bit lane holds 0 (local.cu: every value v as v + zero): values from
    -B = -max(open + 2 extend, 128) up to 65535 - B fit."""
    return max(scheme.gap_open + 2 * scheme.gap_extend, 128) - 32768


def fits_16_bits(scheme, m, n, top=None):
    """Whether pairs of these lengths cannot score past the 16-bit lanes' range; top: the
    best score of a query column (default: the matrix's best)."""
    bound = scheme.max_score(m, n) if top is None else np.minimum(m, n) * np.maximum(top, 0)
    return bound <= 32767 - lane_zero(scheme)


def _profile_bytes(letters: int, lanes: int, word: bool, strip: int) -> int:
    """Shared memory of the strip profile (rows padded to an odd number of 16-byte units)."""
    codes = letters + 1  # with the pad code
    if word:
        return codes**lanes * ((strip // 4) | 1) * 16
    return codes * ((strip // 16) | 1) * 16


def _run_end(groups, n, pair_threads: int, row_bytes: int, budget: int):
    """run_end(start, most) for launch.in_runs over `groups` (targets of n[g] letters): the
    longest run from start, of at most `most` groups (and MAX_GRID_Y), whose scratch,
    (longest target, rounded up to even, + 1) rows of row_bytes per thread, fits `budget`
    bytes; at least one group."""
    rows = (n[groups] + 1) // 2 * 2 + 1

    def run_end(start, most):
        stop, longest = start + 1, rows[start]
        limit = min(len(groups), start + most, start + MAX_GRID_Y)
        while stop < limit and (stop - start + 1) * pair_threads * max(longest, rows[stop]) \
                * row_bytes <= budget:
            longest = max(longest, rows[stop])
            stop += 1
        return stop

    return run_end, rows


def local_scores(scheme, queries: list[np.ndarray], targets: list[np.ndarray],
                 pairs: np.ndarray, keys: np.ndarray, shuffles: int, seed: int,
                 threads: int | None = None, profiles: list[np.ndarray] | None = None, *,
                 word_profile: bool | None = None, max_batch_bytes: int | None = None,
                 group_pairs: int = GROUP_PAIRS, **tuning) -> tuple[np.ndarray, np.ndarray]:
    """Scores of each pair and of its query against shuffles of its target, on the GPU.

    Same arguments and results as backends.cpu.local.local_scores (`threads` is ignored).
    Keywords tune the kernel: word_profile (None: by alphabet size), max_batch_bytes
    (scratch per launch; None: half the free device memory), group_pairs (queries
    sharing a block's shuffles at most) and kernels.Variant.tuned's strip (a multiple of 4,
    of 16 with the int8 profile), block, max_registers.
    """
    import cupy

    began = time.perf_counter()
    queries, targets, pairs, keys, profiles = check_local_inputs(
        scheme, queries, targets, pairs, keys, shuffles, seed, profiles)
    matrix = scheme.matrix()
    tables = [matrix, *(profiles or ())]
    if min(t.min(initial=0) for t in tables) < -128 or max(t.max(initial=0) for t in tables) > 127:
        raise UserError("psse: the GPU kernel needs substitution scores between -128 and 127")
    slots = shuffles + 1
    if not len(pairs):
        return np.zeros(0, dtype=np.int32), np.zeros((0, shuffles), dtype=np.int32)
    q_codes, q_offsets = concatenate(queries)
    t_codes, t_offsets = concatenate(targets)
    m, n = np.diff(q_offsets)[pairs[:, 0]], np.diff(t_offsets)[pairs[:, 1]]
    top = None if profiles is None else np.array([p.max(initial=0) for p in profiles])[pairs[:, 0]]
    narrow = fits_16_bits(scheme, m, n, top)
    letters = len(scheme.alphabet)
    pssm = (np.concatenate(profiles).reshape(-1) if profiles
            else np.zeros(1, dtype=np.int32))
    device = [cupy.asarray(a) for a in (q_codes, q_offsets, t_codes, t_offsets,
                                        np.ascontiguousarray(pairs[:, 0]),
                                        np.ascontiguousarray(pairs[:, 1]))]
    d_out = cupy.full(len(pairs) * slots, INT_POISON, dtype=cupy.int32)
    constants = (cupy.asarray(keys), np.int32(slots), cupy.asarray(matrix.ravel()),
                 cupy.asarray(pssm), np.int32(letters), np.int32(scheme.gap_open),
                 np.int32(scheme.gap_extend), np.uint64(seed))
    suffix = "" if profiles is None else "_pssm"
    prepared = time.perf_counter()
    for lanes in (2, 1):
        members = np.flatnonzero(narrow if lanes == 2 else ~narrow)
        if not members.size:
            continue
        word = lanes == 1 or ((letters + 1) ** 2 <= WORD_PROFILE_MAX if word_profile is None
                              else word_profile)
        variant = VARIANTS[("local_32" if lanes == 1 else "local_16_word" if word
                            else "local_16_int8") + suffix].tuned(**tuning)
        width, block = variant.defines["STRIP"], variant.defines["BLOCK"]
        shared = _profile_bytes(letters, lanes, word, width)
        if shared > SHARED_MAX:
            raise ValueError(f"the strip profile needs {shared} bytes of shared memory")
        kernel = variant.function_handle()
        blocks = -(-slots // (lanes * block))  # per group
        grouped, bounds = target_groups(pairs[members, 1], group_pairs)
        grouped = members[grouped]
        group_n = n[grouped[bounds[:-1]]]
        group_cost = np.add.reduceat((m * n)[grouped], bounds[:-1])
        by_cost = np.argsort(-group_cost, kind="stable")  # costliest groups first
        d_order, d_bounds = cupy.asarray(grouped), cupy.asarray(bounds)
        budget = max_batch_bytes or free_bytes() // 2
        run_end, rows = _run_end(by_cost, group_n, blocks * block, lanes + EDGE_BYTES, budget)

        def launch(start, stop):
            batch, run_rows = by_cost[start:stop], int(rows[start:stop].max())
            threads_total = len(batch) * blocks * block
            scratch = cupy.empty(run_rows * threads_total, dtype=cupy.uint8 if lanes == 1
                                 else cupy.uint16)
            edge = cupy.empty(2 * run_rows * threads_total, dtype=cupy.uint32)
            kernel((blocks, len(batch)), (block,),
                   (*device, d_order, d_bounds, cupy.asarray(batch), *constants,
                    np.int32(lane_zero(scheme) if lanes == 2 else 0), np.int32(run_rows),
                    scratch, edge, d_out),
                   shared_mem=shared)
            return ()

        in_runs(len(by_cost), run_end, launch, 1, "groups of PSSE work")
    launched = time.perf_counter()
    check_written(d_out == INT_POISON, d_out.size, "scores")
    out = d_out.get().reshape(len(pairs), slots)
    # where a call's time goes (psse's fixed cost a work list: issue 21)
    log.debug("local_scores: %d pairs, %.4f s inputs, %.4f s launches, %.4f s to the "
              "scores on the host", len(pairs), prepared - began, launched - prepared,
              time.perf_counter() - launched)
    return out[:, 0].copy(), out[:, 1:].copy()
