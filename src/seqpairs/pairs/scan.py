"""The engine of `seqpairs scan`: queries against long targets, SSCA#1's kernel 1 (the best
local alignments' scores and ends) and kernel 2 (their starts and alignments).

Hits. For a query Q of m letters and a target T of n letters, s(i) = max_j H(i, j) is the
best score of a local alignment ending at target letter i (LocalScheme's H, scoring/
local.py) and q(i) the smallest query end j holding it. Row c is a peak when s(c) >=
min_score (>= 1) and c is the first row holding the maximum of s over its window, rows
c - half .. c + half clipped to 1..n (half: the separation; default the query's length, so
that one alignment's neighbouring ends, which score a little less, are not hits of their
own). The hits of a (query, target) are its `top` peaks of highest score (ties: the
earlier target end), best first: score, query end q(c), target end c; kernel 2 adds the
start (AlignMode local's: the reverse pass from the end, pairs/align.locate) and, on
request, the alignment.

Blocks. A long target is cut into blocks of rows, computed independently (CPU threads
now; GPUs or ranks the same way): the block reporting rows a..b computes rows lo + 1 .. hi
of T from a fresh border at row lo, with hi = min(n, b + half) and lo = max(0, a - half -
span), span = span_bound(m). Its s(x) is exact for every row x it reads (a - half <= x <=
hi): a local alignment scoring >= 1 spans at most `span` target letters, so any that ends at
x starts after lo and lies inside the block, where the block's recurrence sees it; and
the block's H counts no alignment the whole target's would not. Scores below 1 do not
matter (H >= 0). So the peaks, and the hits, do not depend on the blocks: tests check it
against one block and against the plain reference. Where gaps of any length cost the
same (gap_extend 0) no span bound exists and the target is one block.
"""
from __future__ import annotations

import logging

import numpy as np

from .. import backends
from ..backends import Backend
from ..backends.common import concatenate
from ..errors import UserError
from ..scoring import LocalScheme
from ..scoring.local import MODES
from .align import Hits, locate

log = logging.getLogger("seqpairs.scan")
LEAST_BLOCK = 1 << 16  # rows a block reports at least (its warm-up is half + span more)


def span_bound(m: int, scheme: LocalScheme) -> int | None:
    """The most target letters a local alignment holding at most m query letters can span
    and still score >= 1; None where no bound exists (gap_extend 0). Spanning r > m target
    letters puts r - m of them against gaps, which cost at least gap_open + (r - m) x
    gap_extend, while at most m aligned pairs score the best substitution each."""
    best = max(0, max(map(max, scheme.subst)))
    slack = best * m - scheme.gap_open - scheme.gap_extend - 1
    if slack < 0:
        return m
    if scheme.gap_extend == 0:
        return None
    return m + 1 + slack // scheme.gap_extend


def plan_blocks(query_lengths, target_lengths, scheme: LocalScheme, half: int | None,
                block_rows: int | None):
    """The blocks of every (query, target) pair (module doc): dict of int64 arrays query,
    target, lo, hi, report_lo, report_hi, and each pair's half-width."""
    rows = {key: [] for key in ("query", "target", "lo", "hi", "report_lo", "report_hi")}
    for k, m in enumerate(query_lengths):
        width = m if half is None else half
        for r, n in enumerate(target_lengths):
            span = span_bound(m, scheme)
            size = n if span is None else (block_rows or max(LEAST_BLOCK, 4 * (width + span)))
            for start in range(0, max(n, 1), max(size, 1)):
                a, b = start + 1, min(n, start + size)
                lo = 0 if span is None else max(0, a - width - span)
                for key, value in zip(rows, (k, r, lo, min(n, b + width), a, b)):
                    rows[key].append(value)
    return {key: np.array(values, np.int64) for key, values in rows.items()}


def scan(backend: Backend, scheme: LocalScheme, queries: list[np.ndarray],
         targets: list[np.ndarray], top: int, min_score: int = 1, half: int | None = None,
         threads: int | None = None, trace: bool = False,
         block_rows: int | None = None) -> Hits:
    """The hits (module doc) of every query against every target, by query, then target,
    then score (best first), then target end; Hits.query / .target index the lists,
    coordinates are 1-based within the target record."""
    if scheme.gap_open + scheme.gap_extend < 1:
        raise UserError("scan: a gap must cost something (gap-open + gap-extend >= 1)")
    if top < 1 or min_score < 1:
        raise UserError("scan: --top and --min-score must be at least 1")
    q_codes, q_offsets = concatenate(queries)
    t_codes, t_offsets = concatenate(targets)
    items = plan_blocks(np.diff(q_offsets), np.diff(t_offsets), scheme, half, block_rows)
    widths = np.diff(q_offsets)[items["query"]] if half is None else \
        np.full(len(items["query"]), half)
    peaks = backend.scan_peaks or backends.select("cpu").scan_peaks
    parts = []
    for width in np.unique(widths):  # one window width a call
        chosen = widths == width
        score, tend, qend, kept = peaks(q_codes, q_offsets, t_codes, t_offsets,
                                        {key: a[chosen] for key, a in items.items()},
                                        scheme, int(width), top, min_score, threads)
        filled = np.arange(top)[None, :] < kept[:, None]
        parts.append((np.repeat(items["query"][chosen], kept),
                      np.repeat(items["target"][chosen], kept),
                      score[filled], qend[filled], tend[filled]))
    query, target, score, qend, tend = (np.concatenate(column) for column in zip(*parts)) \
        if parts else (np.empty(0, np.int64) for _ in range(5))
    order = np.lexsort((tend, -score, target, query))
    query, target, score, qend, tend = (a[order] for a in (query, target, score, qend, tend))
    pair = query * len(targets) + target
    first = np.r_[0, np.flatnonzero(np.diff(pair)) + 1]
    rank = np.arange(len(pair)) - np.repeat(first, np.diff(np.r_[first, len(pair)]))
    keep = rank < top
    query, target, score, qend, tend = (a[keep] for a in (query, target, score, qend, tend))
    log.info("%d hits of %d queries against %d targets", len(score), len(queries),
             len(targets))
    return _located(backend, scheme, queries, targets, query, target, score, qend, tend,
                    threads, trace)


def _located(backend, scheme, queries, targets, query, target, score, qend, tend, threads,
             trace) -> Hits:
    """Kernel 2: each hit's start and alignment, found in the window of the target that
    can hold it (the rows the reverse pass needs: align.reverse_rows' bound), which
    pairs/align.locate takes as a sequence of its own."""
    best = max(0, max(map(max, scheme.subst)))
    opening, extend = scheme.gap_open + scheme.gap_extend, scheme.gap_extend
    slack = best * qend - score - opening
    rows = np.where(slack < 0, np.minimum(tend, qend),
                    np.minimum(tend, qend + 1 + slack // extend) if extend else tend)
    windows = [targets[r][e - w:e] for r, e, w in zip(target, tend, rows)]
    codes, offsets = concatenate(list(queries) + windows)
    hits = Hits(query.astype(np.int64), len(queries) + np.arange(len(score), dtype=np.int64),
                np.arange(len(score), dtype=np.int64), score.astype(np.int64),
                np.zeros(len(score), np.int64), qend.astype(np.int64),
                np.zeros(len(score), np.int64), rows.astype(np.int64))
    hits = locate(backend, scheme, MODES["local"], codes, offsets, hits, threads, trace)
    shift = tend - rows  # window coordinates back to the target's
    hits.tstart = hits.tstart + shift
    hits.tend = hits.tend + shift
    hits.target = target.astype(np.int64)
    return hits
