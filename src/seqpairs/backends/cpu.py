"""Numba CPU kernel of the SeqDist alignment (../shared/SEQDIST.md), one row in memory.

Besides the cost H, each cell carries counts of the path that the recurrence chose,
packed 16 bits each into one int64 (from the low end):
  length   SeqDist's alignment length (trailing end gaps not counted)
  matches  identical aligned columns
  first    the length at the path's first aligned pair (0xFFFF: none yet)
  last     the length at the path's last aligned pair
A gap move only adds to `length`; an aligned pair also sets `last` to the new length
and `first` to the smaller of itself and the new length (lengths only grow, so it is set
once).
From them: aligned columns (first to last aligned pair, no end gaps) = last - first + 1
and leading end-gap columns = first - 1, so vsearch's iddef 2 identity is exactly
matches / aligned without a traceback.
"""
from __future__ import annotations

import functools

import numba
import numpy as np
from numba import njit, prange

from ..errors import UserError
from ..scoring import SEQDIST_GAP, SEQDIST_HOMOPOLYMER_GAP, SEQDIST_SUBST

FIELD = 16
FIELD_MASK = (1 << FIELD) - 1
LEN_ONE = np.int64(1)
MATCH_ONE = np.int64(1) << FIELD
FIRST_SHIFT = 2 * FIELD
LAST_SHIFT = 3 * FIELD
LAST_MASK = np.int64(FIELD_MASK) << LAST_SHIFT
FIRST_MASK = np.int64(FIELD_MASK) << FIRST_SHIFT
START = FIRST_MASK  # counts of an empty path: length 0, no aligned pair yet
# Two sequences of this length align in at most 2*MAX_LENGTH < 2**15 columns, so every
# count fits its field and the packed word stays positive.
MAX_LENGTH = 16383

DIAG, LEFT, UP = 0, 1, 2
NAME = "cpu"
PAIRS_PER_BATCH = 250_000  # tiles are grouped into launches of about this many pairs


@njit(inline="always")
def _diag_step(packed, eq):
    """Counts after an aligned pair: length + 1, matches + eq, last = length, first once."""
    packed += LEN_ONE + eq * MATCH_ONE
    length = packed & FIELD_MASK
    first = min((packed >> FIRST_SHIFT) & FIELD_MASK, length)
    return (packed & ~(LAST_MASK | FIRST_MASK)) | (first << FIRST_SHIFT) | (length << LAST_SHIFT)


@njit(inline="always")
def _cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p, up_h, up_p, subst_a, gap_row, gap_col,
          inc_row, inc_col):
    """One cell of the recurrence; returns (H, packed counts, move)."""
    # Homopolymer gap: B[j-1] equals the "last match" of the move stored at (i, j-1).
    eq_a = b == a
    if move == UP:
        homopolymer = eq_a
    elif move == LEFT:
        homopolymer = b == prev_b
    else:
        homopolymer = eq_a and b == prev_b
    g = SEQDIST_HOMOPOLYMER_GAP if homopolymer else SEQDIST_GAP
    c1 = diag_h + subst_a[b]
    c2 = left_h + g * gap_row  # gap_row is 0.0 on the last row: trailing gaps are free
    c3 = up_h + g * gap_col  # gap_col is 0.0 on the last column
    if c1 < c2:
        if c1 < c3:
            return c1, _diag_step(diag_p, eq_a), DIAG
        return c3, up_p + inc_col, UP
    if c2 < c3:
        return c2, left_p + inc_row, LEFT
    return c3, up_p + inc_col, UP


@njit(nogil=True, cache=True)
def align_pair(codes, sa, la, sb, lb, subst, h_row, p_row):
    """SeqDist alignment of A = codes[sa:sa+la] (rows) against B = codes[sb:sb+lb] (columns).

    h_row (float64) and p_row (int64) are scratch rows of at least lb + 1 entries.
    Returns (cost, packed counts).
    """
    for j in range(lb + 1):
        h_row[j] = SEQDIST_GAP * j
        p_row[j] = START + j * LEN_ONE
    for i in range(1, la + 1):
        a = codes[sa + i - 1]
        subst_a = subst[a]
        last_row = i == la
        gap_row = 0.0 if last_row else 1.0
        inc_row = 0 if last_row else 1
        diag_h, diag_p = h_row[0], p_row[0]
        left_h = SEQDIST_GAP * i
        left_p = START + i * LEN_ONE
        h_row[0], p_row[0] = left_h, left_p
        move = UP  # column 0 holds UP moves
        prev_b = -1
        for j in range(1, lb):
            b = codes[sb + j - 1]
            up_h, up_p = h_row[j], p_row[j]
            left_h, left_p, move = _cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p,
                                         up_h, up_p, subst_a, gap_row, 1.0, inc_row, 1)
            h_row[j], p_row[j] = left_h, left_p
            diag_h, diag_p = up_h, up_p
            prev_b = b
        # last column: vertical gaps are free and not counted
        b = codes[sb + lb - 1]
        h, p, _ = _cell(a, b, prev_b, move, diag_h, diag_p, left_h, left_p,
                        h_row[lb], p_row[lb], subst_a, gap_row, 0.0, inc_row, 0)
        h_row[lb], p_row[lb] = h, p
    return h_row[lb], p_row[lb]


@njit(parallel=True, nogil=True, cache=True)
def _align_batch(codes, offsets, pa, pb, subst, cost, packed, max_len, chunk):
    n = pa.shape[0]
    nchunks = (n + chunk - 1) // chunk
    for c in prange(nchunks):
        h_row = np.empty(max_len + 1, dtype=np.float64)
        p_row = np.empty(max_len + 1, dtype=np.int64)
        for k in range(c * chunk, min(n, (c + 1) * chunk)):
            x, y = pa[k], pb[k]
            cost[k], packed[k] = align_pair(codes, offsets[x], offsets[x + 1] - offsets[x],
                                            offsets[y], offsets[y + 1] - offsets[y],
                                            subst, h_row, p_row)


def unpack(packed):
    """(length, matches, aligned, leading) int32 arrays from the packed counts.

    aligned: columns from the first to the last aligned pair (0 when there is none);
    leading: end-gap columns before the first aligned pair that the length counts.
    Operators only, so that NumPy and CuPy arrays both work.
    """
    length = (packed & FIELD_MASK).astype(np.int32)
    matches = ((packed >> FIELD) & FIELD_MASK).astype(np.int32)
    first = ((packed >> FIRST_SHIFT) & FIELD_MASK).astype(np.int32)
    last = (packed >> LAST_SHIFT).astype(np.int32)
    seen = (first != FIELD_MASK).astype(np.int32)
    return length, matches, seen * (last - first + 1), seen * (first - 1) + (1 - seen) * length


def array_module():
    """The array module of this backend's inputs and outputs."""
    return np


def to_host(array):
    return array


def set_threads(threads: int | None) -> None:
    """Use this many threads in the Numba kernels (capped at Numba's pool); None: all."""
    numba.set_num_threads(min(threads or numba.config.NUMBA_NUM_THREADS,
                              numba.config.NUMBA_NUM_THREADS))


def check_lengths(offsets) -> int:
    """The longest sequence's length; a UserError if it is over the kernels' limit."""
    max_len = int(np.diff(offsets).max())
    if max_len > MAX_LENGTH:
        raise UserError(f"a sequence of {max_len} bp is longer than the kernel's limit of "
                        f"{MAX_LENGTH} bp")
    return max_len


def chunk_size(pairs: int) -> int:
    """Pairs per parallel chunk: at least 8 chunks a thread, at most 256 pairs a chunk."""
    return max(1, min(256, pairs // (8 * numba.get_num_threads()) or 1))


def aligner(codes, offsets, threads: int | None = None):
    """A function (pa, pb) -> align_pairs(codes, offsets, pa, pb, threads)."""
    return functools.partial(align_pairs, codes, offsets, threads=threads)


def align_pairs(codes, offsets, pa, pb, threads: int | None = None):
    """SeqDist alignments of the pairs (pa[k] as A, pb[k] as B), indices into offsets.

    Returns cost (float64) and length, matches, aligned, leading (int32).
    """
    pa = np.ascontiguousarray(pa, dtype=np.int64)
    pb = np.ascontiguousarray(pb, dtype=np.int64)
    cost = np.empty(len(pa), dtype=np.float64)
    packed = np.empty(len(pa), dtype=np.int64)
    if len(pa):
        set_threads(threads)
        max_len = check_lengths(offsets)
        _align_batch(codes, offsets, pa, pb, SEQDIST_SUBST, cost, packed, max_len,
                     chunk_size(len(pa)))
    return (cost, *unpack(packed))
