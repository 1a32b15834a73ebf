"""Numba kernels of `seqpairs scan` (the contract's scan_rows and scan_peaks): for each
block of a query against a long target, every row's best local alignment score and first
query end, packed as one key (common.COLUMN_BITS), and the block's best peaks among them.

A block's rows lo + 1 .. hi are computed from a fresh border at row lo (pairs/scan.py
chooses lo so that the rows it reads are exact); the target runs down the rows, the query
along a row of H and F (LocalScheme's recurrence), the row's key a branchless maximum over
its cells. Blocks run in parallel, one a thread at a time.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..common import COLUMN_BITS, COLUMN_MASK
from .batch import in_parallel, thread_count
from .local import _max, _profile

NEG = -(1 << 29)  # minus infinity in int32: stays far above its lower bound after gaps


@njit(nogil=True, cache=True)
def _rows(q, t, profile, opening, extend, anchored, keys):
    """keys[i - 1] of rows i = 1..len(t) of q against t (a fresh border at row 0; anchored:
    borders that pay their gaps, no floor, keys of max(H, 0))."""
    m = len(q)
    floor = np.int32(NEG if anchored else 0)
    h_row = np.zeros(m, np.int32)
    if anchored:
        for j in range(m):
            h_row[j] = -(opening + j * extend)  # H(0, j + 1)
    f_row = h_row - opening  # F(1, j + 1): row 0 is the border
    for i in range(len(t)):
        p = profile[t[i]]
        left = np.int32(-(opening + i * extend) if anchored else 0)  # H(i + 1, 0)
        diag = np.int32(0 if i == 0 or not anchored else left + extend)  # H(i, 0)
        e, key = left - opening, np.int64(0)
        for j in range(m):
            f = f_row[j]
            d = _max(_max(diag + p[j], f), floor)
            h = _max(d, e)
            e = max(e - extend, d - opening)
            diag = h_row[j]
            h_row[j] = h
            f_row[j] = _max(f - extend, h - opening)
            key = _max(key, (np.int64(_max(h, np.int32(0))) << COLUMN_BITS) |
                       (COLUMN_MASK - j))
        keys[i] = key


@njit(nogil=True, cache=True)
def _blocks(first, stop, q_codes, q_offsets, t_codes, t_offsets, item_query, item_target, lo,
            hi, base, subst, opening, extend, anchored, keys):
    """The rows' keys of blocks first..stop-1."""
    no_pssm = np.zeros((0, subst.shape[0]), np.int32)
    for k in range(first, stop):
        q = q_codes[q_offsets[item_query[k]]:q_offsets[item_query[k] + 1]]
        t0 = t_offsets[item_target[k]]
        profile = np.empty((subst.shape[0], len(q)), np.int32)  # [target letter][column]
        _profile(profile, q, subst, no_pssm, False)
        _rows(q, t_codes[t0 + lo[k]:t0 + hi[k]], profile, opening, extend, anchored,
              keys[base[k]:base[k] + hi[k] - lo[k]])


def rows(q_codes, q_offsets, t_codes, t_offsets, blocks, scheme, threads=None,
         anchored=False):
    """The contract's scan_rows: the keys of every block's rows lo + 1 .. hi, block after
    block (int64)."""
    spans = blocks["hi"] - blocks["lo"]
    base = np.r_[0, np.cumsum(spans)].astype(np.int64)
    keys = np.zeros(int(base[-1]), np.int64)
    if len(spans):
        in_parallel(_blocks, len(spans), threads, q_codes, q_offsets, t_codes, t_offsets,
                    *(np.ascontiguousarray(blocks[key], np.int64)
                      for key in ("query", "target", "lo", "hi")), base[:-1],
                    scheme.matrix(), np.int32(scheme.gap_open + scheme.gap_extend),
                    np.int32(scheme.gap_extend), anchored, keys)
    return keys


@njit(nogil=True, cache=True)
def _block_peaks(keys, lo, hi, report_lo, report_hi, n, half, top, min_score, out_score,
                 out_tend, out_qend):
    """The best `top` peaks (unordered) among rows report_lo..report_hi of a block whose
    rows lo + 1..hi have keys[0:hi - lo]; returns how many. A sliding-window maximum over
    the rows (a deque, earliest first among equal scores) decides each row as the last
    row of its window arrives."""
    ring = 2 * half + 2
    deque = np.zeros(ring, np.int64)
    head, size, kept = 0, 0, 0
    first = max(lo + 1, report_lo - half)
    for i in range(first, report_hi + half + 1):
        if i <= hi:
            score = keys[i - lo - 1] >> COLUMN_BITS
            while size and keys[deque[(head + size - 1) % ring] - lo - 1] >> COLUMN_BITS < score:
                size -= 1  # later rows of equal score stay behind earlier ones
            deque[(head + size) % ring] = i
            size += 1
        c = i - half  # the row whose window ends here (or at n)
        if c < report_lo or c > min(report_hi, n):
            continue
        while deque[head] < c - half:
            head = (head + 1) % ring
            size -= 1
        key = keys[c - lo - 1]
        score = key >> COLUMN_BITS
        if deque[head] != c or score < min_score:
            continue
        if kept < top:
            slot = kept
            kept += 1
        else:  # replace the weakest kept peak (the latest among equals), if this is better
            slot = 0
            for k in range(1, top):
                if out_score[k] < out_score[slot] or (out_score[k] == out_score[slot] and
                                                      out_tend[k] > out_tend[slot]):
                    slot = k
            if score <= out_score[slot]:
                continue
        out_score[slot], out_tend[slot] = score, c
        out_qend[slot] = COLUMN_MASK - (key & COLUMN_MASK) + 1
    return kept


@njit(nogil=True, cache=True)
def _peaks(first, stop, keys, base, lo, hi, report_lo, report_hi, n, half, top, min_score,
           out_score, out_tend, out_qend, kept):
    """The peaks of blocks first..stop-1."""
    for k in range(first, stop):
        kept[k] = _block_peaks(keys[base[k]:base[k + 1]], lo[k], hi[k], report_lo[k],
                               report_hi[k], n[k], half[k], top, min_score, out_score[k],
                               out_tend[k], out_qend[k])


def peaks(keys, blocks, top, min_score, threads=None):
    """The contract's scan_peaks: each block's best `top` peaks (pairs/scan.py) from its
    rows' keys (scan_rows' of the same blocks): score, target end and query end (int64
    [blocks, top], unordered, the first `kept` of each row filled) and kept (int64)."""
    base = np.r_[0, np.cumsum(blocks["hi"] - blocks["lo"])].astype(np.int64)
    found = [np.zeros((len(base) - 1, top), np.int64) for _ in range(3)]
    kept = np.zeros(len(base) - 1, np.int64)
    if len(kept):
        in_parallel(_peaks, len(kept), threads, np.asarray(keys, np.int64), base,
                    *(np.asarray(blocks[key], np.int64)
                      for key in ("lo", "hi", "report_lo", "report_hi", "n", "half")),
                    top, min_score, *found, kept)
    return (*found, kept)


def slots(scheme, query_length, threads=None) -> int:
    """The contract's scan_slots: a block a thread (thread_count's)."""
    return thread_count(threads)
