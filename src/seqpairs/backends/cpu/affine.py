"""Numba CPU kernel of the affine global alignment (scoring/affine.py's AffineScheme), one row.

Each state is packed into one int64, score << 32 - length (length < 2**15, scores within
+-2**31), so that the spec's order (the higher score, then the shorter length) is the
order of the packed integers and every choice of the recurrence is a plain maximum.
A gap step subtracts pack(cost, -1) (score - cost, length + 1), a diagonal step adds
pack(subst, 1) from a per-pair profile of B. Rows of H and F are scratch arrays of lb + 1
entries overwritten in place; E runs along the row in a scalar. Two rows go per pass, the
second one column behind the first, so that their dependency chains overlap.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...scoring.affine import NEG
from .batch import pair_kernel

SHIFT = 32
LO = np.int64((1 << SHIFT) - 1)


@njit(inline="always")
def _pack(score, length):
    return (np.int64(score) << SHIFT) - length


@njit(inline="always")
def _unpack(packed):
    """(score, length) of a packed state (its length is below 2**32)."""
    score = (packed + LO) >> SHIFT
    return score, (score << SHIFT) - packed


@njit(inline="always")
def _cell(diag, left, e, up, f, s, gap_h, gap_v):
    """One interior cell on packed states; returns (H, E, F).

    gap_h, gap_v: (open + extend, extend) steps of the row's horizontal and the column's
    vertical gaps.
    """
    f = max(up - gap_v[0], f - gap_v[1])
    e = max(left - gap_h[0], e - gap_h[1])
    return max(diag + s, e, f), e, f


@njit(nogil=True, cache=True)
def _one_row(h_row, f_row, lb, prof_a, left, gap_h, gap_in, gap_end):
    """Turn h_row, f_row from row i - 1 into row i; left is H(i, 0)."""
    diag = h_row[0]
    h_row[0] = left
    e = _pack(NEG, 0)
    for j in range(1, lb):
        up = h_row[j]
        left, e, f = _cell(diag, left, e, up, f_row[j], prof_a[j], gap_h, gap_in)
        h_row[j], f_row[j] = left, f
        diag = up
    # vertical gaps in the last column are terminal
    h_row[lb], _, f_row[lb] = _cell(diag, left, e, h_row[lb], f_row[lb], prof_a[lb], gap_h,
                                    gap_end)


@njit(nogil=True, cache=True)
def _two_rows(h_row, f_row, lb, prof_1, prof_2, left_1, left_2, gap_h2, gap_in, gap_end):
    """Rows i (interior) and i + 1 in one pass; left_1, left_2 are H(i, 0), H(i + 1, 0)."""
    diag_1 = h_row[0]
    h_row[0] = left_2
    e_1 = e_2 = _pack(NEG, 0)
    for j in range(1, lb):
        diag_2 = left_1
        up = h_row[j]
        left_1, e_1, f_1 = _cell(diag_1, left_1, e_1, up, f_row[j], prof_1[j], gap_in, gap_in)
        left_2, e_2, f_2 = _cell(diag_2, left_2, e_2, left_1, f_1, prof_2[j], gap_h2, gap_in)
        h_row[j], f_row[j] = left_2, f_2
        diag_1 = up
    diag_2 = left_1
    left_1, _, f_1 = _cell(diag_1, left_1, e_1, h_row[lb], f_row[lb], prof_1[lb], gap_in,
                           gap_end)
    h_row[lb], _, f_row[lb] = _cell(diag_2, left_2, e_2, left_1, f_1, prof_2[lb], gap_h2,
                                    gap_end)


@njit(nogil=True, cache=True)
def align_pair(codes, sa, la, sb, lb, subst, gap_open, gap_extend, end_open, end_extend,
               h_row, f_row, prof):
    """Affine alignment of A = codes[sa:sa+la] (rows) against B = codes[sb:sb+lb] (columns).

    subst is the int32 K x K matrix (K letters); h_row, f_row (int64, lb + 1) and prof
    (int64, K x lb + 1) are scratch. Returns (score, length).
    """
    for a in range(subst.shape[0]):
        for j in range(1, lb + 1):
            prof[a, j] = _pack(subst[a, codes[sb + j - 1]], 1)
    h_row[0] = 0
    for j in range(1, lb + 1):
        h_row[j] = _pack(-(end_open + j * end_extend), j)
        f_row[j] = _pack(NEG, 0)
    gap_in = (_pack(gap_open + gap_extend, -1), _pack(gap_extend, -1))
    gap_end = (_pack(end_open + end_extend, -1), _pack(end_extend, -1))
    i = 1
    while i < la:
        # horizontal gaps on the last row are terminal
        gap_h2 = gap_end if i + 1 == la else gap_in
        _two_rows(h_row, f_row, lb, prof[codes[sa + i - 1]], prof[codes[sa + i]],
                  _pack(-(end_open + i * end_extend), i),
                  _pack(-(end_open + (i + 1) * end_extend), i + 1), gap_h2, gap_in, gap_end)
        i += 2
    if i == la:
        _one_row(h_row, f_row, lb, prof[codes[sa + i - 1]],
                 _pack(-(end_open + i * end_extend), i), gap_end, gap_in, gap_end)
    return _unpack(h_row[lb])


@njit(nogil=True, cache=True)
def _align_pairs(first, stop, codes, offsets, pa, pb, subst, gap_open, gap_extend, end_open,
                 end_extend, score, length, max_len):
    """Scores and lengths of pairs first..stop-1."""
    h_row = np.empty(max_len + 1, dtype=np.int64)
    f_row = np.empty(max_len + 1, dtype=np.int64)
    prof = np.empty((subst.shape[0], max_len + 1), dtype=np.int64)
    for k in range(first, stop):
        x, y = pa[k], pb[k]
        score[k], length[k] = align_pair(
            codes, offsets[x], offsets[x + 1] - offsets[x],
            offsets[y], offsets[y + 1] - offsets[y], subst,
            gap_open, gap_extend, end_open, end_extend, h_row, f_row, prof)


def aligner(codes, offsets, scheme, threads: int | None = None):
    """The contract's affine kernel: (pa, pb) -> score and length (int32) of the pairs
    (pa[k] as A, pb[k] as B), indices into offsets, as AffineScheme defines them."""
    return pair_kernel(codes, offsets, threads, _align_pairs,
                       (scheme.matrix(), scheme.gap_open, scheme.gap_extend, scheme.end_open,
                        scheme.end_extend), (np.int32, np.int32))
