"""Device-neutral pieces of the backend contract, shared by backends/cpu and backends/gpu
(neither imports the other): the sequence length limit, the packed SeqDist counts that
both write, and the checked inputs of the PSSE engines. NumPy only; every function that
takes arrays works on NumPy and CuPy arrays alike."""
from __future__ import annotations

import numpy as np

from ..errors import UserError
from ..limits import MAX_LENGTH
from ..scoring.scheme import MAX_COST

# SeqDist counts of a path, packed 16 bits each into one int64, from the low end:
#   length   SeqDist's alignment length (trailing end gaps not counted)
#   matches  identical aligned columns
#   first    the length at the path's first aligned pair (FIELD_MASK: none yet)
#   last     the length at the path's last aligned pair
FIELD = 16
FIELD_MASK = (1 << FIELD) - 1
FIRST_SHIFT = 2 * FIELD
LAST_SHIFT = 3 * FIELD


def check_lengths(offsets) -> int:
    """The longest sequence's length; a UserError if it is over the kernels' limit."""
    max_len = int(np.diff(offsets).max())
    if max_len > MAX_LENGTH:
        raise UserError(f"a sequence of {max_len} bp is longer than the kernel's limit of "
                        f"{MAX_LENGTH} bp")
    return max_len


def unpack(packed):
    """(length, matches, aligned, leading) int32 arrays from the packed counts.

    aligned: columns from the first to the last aligned pair (0 when there is none);
    leading: end-gap columns before the first aligned pair that the length counts.
    """
    length = (packed & FIELD_MASK).astype(np.int32)
    matches = ((packed >> FIELD) & FIELD_MASK).astype(np.int32)
    first = ((packed >> FIRST_SHIFT) & FIELD_MASK).astype(np.int32)
    last = (packed >> LAST_SHIFT).astype(np.int32)
    seen = (first != FIELD_MASK).astype(np.int32)
    return length, matches, seen * (last - first + 1), seen * (first - 1) + (1 - seen) * length


def path_diagonals(upper, cheapest_gap: float):
    """The farthest |j - i| (int64) that a cell (i, j) before the last row and column can
    lie from the main diagonal on a path costing at most `upper` (docs/pruning.md, section
    6): the full matrix's cost there is at least cheapest_gap |j - i| (section 2, scaled
    down by 1 - 2^-40 for its rounding). Capped at MAX_LENGTH (an infinite upper)."""
    most = np.floor(np.asarray(upper, dtype=np.float64) / cheapest_gap * (1 + 2.0**-38))
    return np.minimum(most, MAX_LENGTH).astype(np.int64)


# The banded kernels' lower band (docs/pruning.md, section 2) leaves, a row of A, the
# cells the band reads beside it: left of the band, right of it and left of the last
# column (gpu_kernels/band.cu's EDGES).
EDGES = 3


# seqpairs scan's row keys (scan_rows): a row's best H and its first query column (0-based)
# in one int64, H << COLUMN_BITS | (COLUMN_MASK - column), so that the larger key holds the
# higher score, then the earlier column
COLUMN_BITS = 15
COLUMN_MASK = (1 << COLUMN_BITS) - 1
assert MAX_LENGTH <= COLUMN_MASK


# The traced affine alignment's counts that affine_counts gives (alignments.COUNTS names).
AFFINE_COUNTS = ("score", "matches", "mismatches", "openings", "columns", "terminal_gaps",
                 "terminal_openings")


def concatenate(seqs) -> tuple[np.ndarray, np.ndarray]:
    """(codes, offsets): the sequences end to end and where each one starts (int64); no
    copy where they already lie end to end in one uint8 array (a file's records, one long
    target: a genome's gigabyte is not copied)."""
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    codes = _end_to_end(seqs)
    if codes is None:
        codes = np.concatenate(seqs) if seqs else np.empty(0, dtype=np.uint8)
    return codes.astype(np.uint8, copy=False), offsets


def _end_to_end(seqs) -> np.ndarray | None:
    """The one uint8 array's stretch that holds seqs end to end, else None."""
    if not len(seqs) or not all(isinstance(s, np.ndarray) and s.dtype == np.uint8 and
                                s.ndim == 1 and s.flags.c_contiguous for s in seqs):
        return None
    if len(seqs) == 1:
        return seqs[0]
    base = next((s.base for s in seqs if len(s)), None)
    if not isinstance(base, np.ndarray) or base.dtype != np.uint8 or base.ndim != 1 or \
            not base.flags.c_contiguous:
        return None
    first = next((s.ctypes.data for s in seqs if len(s)), None)
    at = first
    for s in seqs:
        if not len(s):  # an empty view's address says nothing
            continue
        if s.base is not base or s.ctypes.data != at:
            return None
        at += len(s)
    start = first - base.ctypes.data
    return base[start:start + at - first]



def check_local_inputs(scheme, queries, targets, pairs, keys, shuffles: int, seed: int,
                       profiles=None):
    """Validated inputs of Backend.local_scores, cut down to the sequences the pairs name:
    (queries, targets as uint8 arrays, pairs as int64 [P, 2] rows into them, keys as
    int64, profiles as int32 [m, K] arrays or None). A call's cost follows its pairs, not
    the whole input: psse scores a large FASTA's pairs a work list at a time."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    keys = np.asarray(keys, dtype=np.int64).reshape(-1)
    if len(keys) != len(targets):
        raise UserError(f"psse: {len(targets)} targets and {len(keys)} target keys; they "
                        "must be as many")
    if profiles is not None and len(profiles) != len(queries):
        raise UserError(f"psse: {len(queries)} queries and {len(profiles)} profiles; they "
                        "must be as many")
    for side, (column, seqs) in enumerate((("query", queries), ("target", targets))):
        if pairs.size and not (0 <= pairs[:, side].min() and pairs[:, side].max() < len(seqs)):
            raise UserError(f"psse: a pair's {column} index is outside the {len(seqs)} "
                            f"{column} sequences")
    if not 0 <= shuffles < 2**31:
        raise UserError(f"psse: shuffles must be between 0 and {2**31 - 1}, got {shuffles}")
    if not 0 <= seed < 2**64:
        raise UserError(f"psse: the seed must be between 0 and 2**64 - 1, got {seed}")
    if keys.size and keys.min() < 0:
        raise UserError(f"psse: target keys must be >= 0, got {keys.min()}")
    used = [np.unique(pairs[:, side]) for side in (0, 1)]
    pairs = np.column_stack([np.searchsorted(used[side], pairs[:, side]) for side in (0, 1)])
    seqs = []
    for role, group, rows in (("query", queries, used[0]), ("target", targets, used[1])):
        out = []
        for k in rows.tolist():
            codes = np.ascontiguousarray(group[k], dtype=np.uint8)
            if codes.size > MAX_LENGTH:
                raise UserError(f"psse: {role} {k} has {codes.size} letters, more than the "
                                f"limit of {MAX_LENGTH}")
            if codes.size and codes.max() >= len(scheme.alphabet):
                raise UserError(f"psse: {role} {k} has letter code {codes.max()}, outside "
                                f"the {len(scheme.alphabet)}-letter alphabet")
            out.append(codes)
        seqs.append(out)
    if profiles is not None:
        profiles = [np.ascontiguousarray(profiles[k], dtype=np.int32) for k in used[0].tolist()]
        for k, profile, query in zip(used[0].tolist(), profiles, seqs[0]):
            if profile.shape != (len(query), len(scheme.alphabet)):
                raise UserError(f"psse: the profile of query {k} is {profile.shape}, not "
                                f"{(len(query), len(scheme.alphabet))} (letters x alphabet)")
            if profile.size and np.abs(profile).max() > MAX_COST:
                raise UserError(f"psse: the profile of query {k} has a score beyond "
                                f"+-{MAX_COST}")
    return seqs[0], seqs[1], pairs, keys[used[1]], profiles


def target_groups(pair_targets: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs grouped by target, for engines that shuffle a target once for all its
    queries: (order, bounds), group g the pairs order[bounds[g]:bounds[g + 1]], all with
    one target and at most `most` of them, in target order."""
    order = np.argsort(pair_targets, kind="stable")
    sorted_targets = pair_targets[order]
    new_target = np.flatnonzero(np.diff(sorted_targets)) + 1
    rank = np.arange(len(order)) - np.repeat(np.r_[0, new_target],
                                             np.diff(np.r_[0, new_target, len(order)]))
    starts = np.flatnonzero(rank % most == 0) if len(order) else np.empty(0, dtype=np.int64)
    return order, np.r_[starts, len(order)].astype(np.int64)


def runs_within(sizes: np.ndarray, most: float):
    """(lo, hi) runs of consecutive items whose sizes add up to at most `most` (at least
    one item a run)."""
    total = np.cumsum(sizes)
    lo = 0
    while lo < len(sizes):
        before = total[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(total, before + most, side="right")))
        yield lo, hi
        lo = hi
