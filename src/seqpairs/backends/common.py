"""Device-neutral pieces of the backend contract, shared by backends/cpu and backends/gpu
(neither imports the other): the sequence length limit, the packed SeqDist counts that
both write, and the checked inputs of the PSSE engines. NumPy only; every function that
takes arrays works on NumPy and CuPy arrays alike."""
from __future__ import annotations

import numpy as np

from ..errors import UserError
from ..limits import MAX_LENGTH

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


# The traced affine alignment's counts that affine_counts gives (alignments.COUNTS names).
AFFINE_COUNTS = ("score", "matches", "mismatches", "openings", "columns", "terminal_gaps",
                 "terminal_openings")


def concatenate(seqs) -> tuple[np.ndarray, np.ndarray]:
    """(codes, offsets): the sequences end to end and where each one starts (int64)."""
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    codes = np.concatenate(seqs) if seqs else np.empty(0, dtype=np.uint8)
    return codes.astype(np.uint8, copy=False), offsets


def check_local_inputs(scheme, queries, targets, pairs, shuffles: int, seed: int):
    """Validated inputs of Backend.local_scores: (queries, targets as uint8 arrays, pair keys
    as int64)."""
    if not len(queries) == len(targets) == len(pairs):
        raise UserError(f"psse: {len(queries)} queries, {len(targets)} targets and "
                        f"{len(pairs)} pair keys; they must be as many")
    if not 0 <= shuffles < 2**31:
        raise UserError(f"psse: shuffles must be between 0 and {2**31 - 1}, got {shuffles}")
    if not 0 <= seed < 2**64:
        raise UserError(f"psse: the seed must be between 0 and 2**64 - 1, got {seed}")
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1)
    if pairs.size and pairs.min() < 0:
        raise UserError(f"psse: pair keys must be >= 0, got {pairs.min()}")
    seqs = []
    for role, group in (("query", queries), ("target", targets)):
        out = []
        for k, codes in enumerate(group):
            codes = np.ascontiguousarray(codes, dtype=np.uint8)
            if codes.size > MAX_LENGTH:
                raise UserError(f"psse: {role} of pair {k} has {codes.size} letters, more "
                                f"than the limit of {MAX_LENGTH}")
            if codes.size and codes.max() >= len(scheme.alphabet):
                raise UserError(f"psse: {role} of pair {k} has letter code {codes.max()}, "
                                f"outside the {len(scheme.alphabet)}-letter alphabet")
            out.append(codes)
        seqs.append(out)
    return seqs[0], seqs[1], pairs
