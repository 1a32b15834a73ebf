"""Numba kernel of `seqpairs scan` (the contract's scan_peaks): the best local alignment
ending at each letter of a long target, and the peaks among them (pairs/scan.py states
what a peak is).

A work item is a block of one (query, target) pair: rows lo..hi of the target computed
from a fresh start at lo (pairs/scan.py chooses lo early enough that every row it reports
on is exact), the peaks of rows report_lo..report_hi kept, at most `top` of them. The
rows run down the target, the query along a row of H and F (LocalScheme's recurrence,
int64), each row's best H and its first column taken as the row's score and query end;
a sliding-window maximum (a deque of rows, earliest first among equals) decides the peaks
as rows arrive, so memory is the query's length and the window's, not the target's.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..common import MAX_LENGTH
from .batch import set_threads

# a row's best H and its first column packed as H << COLUMN_BITS | (COLUMN_MASK - column)
COLUMN_BITS = 15
COLUMN_MASK = (1 << COLUMN_BITS) - 1
assert MAX_LENGTH <= COLUMN_MASK


@njit(inline="always")
def _max(a, b):
    """max without a compare (local.py's reason: LLVM's branches mispredict here)."""
    d = np.int64(a) - np.int64(b)
    return a - (d & (d >> 63))


@njit(nogil=True, cache=True)
def _block(q, t, lo, hi, report_lo, report_hi, n, subst, opening, extend, half, top,
           min_score, out_score, out_tend, out_qend):
    """Peaks of rows report_lo..report_hi (1-based, inclusive) of q against t, rows lo + 1
    .. hi computed (t[lo:hi]); the window of a row c is rows c - half .. c + half, clipped
    to 1..n. Fills out_* (length top) with the best peaks, unordered; returns how many."""
    m = len(q)
    h_row = np.zeros(m, np.int32)
    f_row = np.full(m, -opening, np.int32)  # F(lo + 1, j): row lo is a fresh border
    profile = np.empty((subst.shape[0], m), np.int32)  # [target letter][query column]
    for b in range(subst.shape[0]):
        for j in range(m):
            profile[b, j] = subst[q[j], b]
    ring = 2 * half + 2
    ring_score = np.zeros(ring, np.int64)
    ring_qend = np.zeros(ring, np.int64)
    deque = np.zeros(ring, np.int64)  # rows, by decreasing score, earliest first
    head, size, kept = 0, 0, 0
    for i in range(lo + 1, hi + 1 + half):
        if i <= hi:  # row i: its best H and the first column holding it
            p = profile[t[i - 1]]
            diag, e, key = np.int32(0), np.int32(-opening), np.int64(0)
            for j in range(m):
                f = f_row[j]
                d = _max(_max(diag + p[j], f), np.int32(0))
                h = _max(d, e)
                e = max(e - extend, d - opening)
                diag = h_row[j]
                h_row[j] = h
                f_row[j] = _max(f - extend, h - opening)
                # the row's best and its first column in one branchless maximum
                key = _max(key, (np.int64(h) << COLUMN_BITS) | (COLUMN_MASK - j))
            best = key >> COLUMN_BITS
            best_j = COLUMN_MASK - (key & COLUMN_MASK) + 1 if best else 0
            ring_score[i % ring], ring_qend[i % ring] = best, best_j
            while size and ring_score[deque[(head + size - 1) % ring] % ring] < best:
                size -= 1  # later rows with equal scores stay behind earlier ones
            deque[(head + size) % ring] = i
            size += 1
        c = i - half  # the centre whose window ends at row i (or at n)
        if c < 1 or c > n:
            continue
        while deque[head] < c - half:
            head = (head + 1) % ring
            size -= 1
        if c < report_lo or c > report_hi or deque[head] != c:
            continue
        score = ring_score[c % ring]
        if score < min_score:
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
        out_score[slot], out_tend[slot], out_qend[slot] = score, c, ring_qend[c % ring]
    return kept


@njit(parallel=True, nogil=True, cache=True)
def _blocks(q_codes, q_offsets, t_codes, t_offsets, item_query, item_target, lo, hi,
            report_lo, report_hi, subst, opening, extend, half, top, min_score, out_score,
            out_tend, out_qend, kept):
    for k in prange(len(item_query)):
        q = q_codes[q_offsets[item_query[k]]:q_offsets[item_query[k] + 1]]
        t = t_codes[t_offsets[item_target[k]]:t_offsets[item_target[k] + 1]]
        kept[k] = _block(q, t, lo[k], hi[k], report_lo[k], report_hi[k], len(t), subst,
                         opening, extend, half, top, min_score, out_score[k], out_tend[k],
                         out_qend[k])


def peaks(q_codes, q_offsets, t_codes, t_offsets, items, scheme, half: int, top: int,
          min_score: int, threads=None):
    """The contract's scan_peaks: for each block (query, target, lo, hi, report_lo,
    report_hi: rows lo + 1..hi computed, peaks of rows report_lo..report_hi kept), up to
    `top` peaks scoring at least min_score. Returns (score, target end, query end) int64
    [blocks, top] and how many of each row are filled."""
    blocks = len(items["query"])
    out = [np.zeros((blocks, top), np.int64) for _ in range(3)]
    kept = np.zeros(blocks, np.int64)
    if blocks:
        set_threads(threads)
        _blocks(q_codes, q_offsets, t_codes, t_offsets,
                *(np.ascontiguousarray(items[key], np.int64)
                  for key in ("query", "target", "lo", "hi", "report_lo", "report_hi")),
                scheme.matrix(), np.int32(scheme.gap_open + scheme.gap_extend),
                np.int32(scheme.gap_extend), half, top, min_score, *out, kept)
    return (*out, kept)
