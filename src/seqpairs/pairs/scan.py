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

Rows and peaks. The backend (scan_rows: CPU threads, or a thread block a block of rows
on the GPU) gives every row's key, its best score and first query end (common.
COLUMN_BITS), and finds each block's best peaks in them (scan_peaks), its
scan_rows_per_call rows at a time.

Blocks. A long target is cut into blocks of rows, computed independently (threads, warps;
GPUs or ranks the same way): the block reporting rows a..b computes rows lo + 1 .. hi
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
from ..backends.common import COLUMN_BITS, COLUMN_MASK, concatenate, runs_within
from ..errors import UserError
from ..scoring import LocalScheme
from .align import Hits, alignments_of, best_per_query

log = logging.getLogger("seqpairs.scan")


NO_BOUND = np.iinfo(np.int64).max  # max_span where gaps of any length cost the same


# the longest query: its columns must fit a row key's column field (common.COLUMN_BITS),
# not the 16-bit counts that bound other stages' sequences (limits.MAX_LENGTH)
MAX_QUERY = COLUMN_MASK


def max_span(m, score, scheme: LocalScheme):
    """The most target letters a local alignment holding at most m query letters can span
    and still score `score` (NumPy arrays work); NO_BOUND where no bound exists
    (gap_extend 0). Spanning r > m target letters puts r - m of them against gaps, which
    cost at least gap_open + (r - m) x gap_extend, while at most m aligned pairs score the
    best substitution each (scheme.max_score)."""
    m = np.asarray(m, np.int64)
    slack = scheme.max_score(m, m) - scheme.gap_open - scheme.gap_extend - np.asarray(score)
    longer = m + 1 + slack // scheme.gap_extend if scheme.gap_extend else NO_BOUND
    return np.where(slack < 0, m, longer)


def span_bound(m: int, scheme: LocalScheme) -> int | None:
    """max_span of an alignment scoring >= 1 (the blocks' warm-up); None: no bound."""
    span = int(max_span(m, 1, scheme))
    return None if span == NO_BOUND else span


def plan_blocks(query_lengths, target_lengths, scheme: LocalScheme, half: int | None,
                block_rows: int | None, slots: int = 1, per_call: float = np.inf):
    """The blocks of every (query, target) pair (module doc): dict of int64 arrays query,
    target, lo, hi, report_lo, report_hi. Each reports block_rows rows, or as many as
    fill whole waves of `slots` blocks running at once soonest (block_rows_for)."""
    rows = {key: [] for key in ("query", "target", "lo", "hi", "report_lo", "report_hi")}
    for k, m in enumerate(query_lengths):
        width = m if half is None else half
        span = span_bound(m, scheme)
        for r, n in enumerate(target_lengths):
            size = n if span is None else \
                (block_rows or block_rows_for(n, width + span, slots, per_call))
            for start in range(0, max(n, 1), max(size, 1)):
                a, b = start + 1, min(n, start + size)
                lo = 0 if span is None else max(0, a - width - span)
                for key, value in zip(rows, (k, r, lo, min(n, b + width), a, b)):
                    rows[key].append(value)
    return {key: np.array(values, np.int64) for key, values in rows.items()}


def block_rows_for(n: int, warm: int, slots: int, per_call: float) -> int:
    """The rows each block of a target of n rows reports, its blocks computing `warm` rows
    more each, `slots` at a time, in calls of at most per_call rows: the fewest rows the
    busiest slot computes, over block counts of whole waves (a wave a third full costs a
    whole one: 873 blocks on an H100's 264 slots ran at 1,423 GCUPS)."""
    best = (np.inf, max(n, 1))
    for waves in range(1, MAX_WAVES + 1):
        rows = max(1, -(-n // (waves * slots)))
        count, size = -(-n // rows), rows + warm
        per = max(1, min(count, per_call // size))  # blocks a call: whole waves (in_waves)
        per = max(per // slots * slots, min(per, slots))
        calls, rest = divmod(count, per)
        steps = (calls * -(-per // slots) + -(-rest // slots)) * size
        best = min(best, (steps, rows))
    return int(best[1])


MAX_WAVES = 64  # block counts block_rows_for weighs: waves of the slots


def scan(backend: Backend, scheme: LocalScheme, queries: list[np.ndarray],
         targets: list[np.ndarray], top: int, min_score: int = 1, half: int | None = None,
         threads: int | None = None, trace: bool = False,
         block_rows: int | None = None) -> Hits:
    """The hits (module doc) of every query against every target, by query, then target,
    then score (best first), then target end; Hits.query / .target index the lists,
    coordinates are 1-based within the target record. One worker: block_peaks over every
    block, then hits."""
    blocks = plan(scheme, queries, targets, half, block_rows, top, min_score,
                  slots(backend, scheme, queries, threads), per_call(backend))
    found = block_peaks(backend, scheme, queries, targets, blocks, top, min_score, threads)
    return hits(backend, scheme, queries, targets, blocks, *found, top, threads, trace)


def worker(backend: Backend) -> Backend:
    """The backend that computes scan's rows: this one, or the CPU's where it has none."""
    return backend if backend.scan_rows else backends.select("cpu")


def slots(backend: Backend, scheme: LocalScheme, queries, threads=None) -> int:
    """Blocks of the longest query that one worker of the backend runs at once."""
    longest = max((len(q) for q in queries), default=1)
    return worker(backend).scan_slots(scheme, longest, threads)


def in_waves(blocks: dict, slots: int, pull=None, rows_per_call: float = np.inf):
    """Work lists of blocks in whole waves: `pull` (an executor's; None: one worker, every
    wave in order) is given the costs of groups of `slots` consecutive blocks, one wave of
    one worker's device, and each list of waves it hands out comes back as calls of whole
    waves (as many as rows_per_call rows hold, at least one), their blocks in order.
    Lists or calls counted in blocks would mostly end in a partial wave, which takes as
    long as a whole one."""
    count, slots = len(blocks["cost"]), max(slots, 1)
    starts = np.arange(0, count, slots)
    costs = np.add.reduceat(blocks["cost"], starts) if count else np.empty(0)
    rows = int((blocks["hi"] - blocks["lo"]).max(initial=1))
    fit = min(rows_per_call / rows, count)  # blocks a call holds (inf / rows: inf)
    per_call_waves = max(1, int(fit // slots))
    for waves in [np.arange(len(costs))] if pull is None else pull(costs):
        for k in range(0, len(waves), per_call_waves):
            yield np.concatenate([np.arange(starts[w], min(starts[w] + slots, count))
                                  for w in waves[k:k + per_call_waves]])


def per_call(backend: Backend) -> int:
    """Rows a call to the backend's scan_rows holds at most."""
    return worker(backend).scan_rows_per_call


def plan(scheme: LocalScheme, queries, targets, half, block_rows, top, min_score,
         slots: int = 1, per_call: float = np.inf) -> dict:
    """plan_blocks' blocks of every query against every target, with each block's window
    half-width ("half"), its target's length ("n") and cost (rows x query letters)."""
    if scheme.gap_open + scheme.gap_extend < 1:
        raise UserError("scan: a gap must cost something (gap-open + gap-extend >= 1)")
    if top < 1 or min_score < 1:
        raise UserError("scan: --top and --min-score must be at least 1")
    m = np.array([len(q) for q in queries], np.int64)
    n = np.array([len(t) for t in targets], np.int64)
    blocks = plan_blocks(m, n, scheme, half, block_rows, slots, per_call)
    blocks["half"] = m[blocks["query"]] if half is None else \
        np.full(len(blocks["query"]), half, np.int64)
    blocks["n"] = n[blocks["target"]]
    blocks["cost"] = (blocks["hi"] - blocks["lo"]) * m[blocks["query"]]
    return blocks


def block_peaks(backend: Backend, scheme: LocalScheme, queries, targets, blocks: dict,
                top: int, min_score: int, threads=None, work=None):
    """Kernel 1 on the blocks of `work` (lists of block numbers, a call each where they
    fit one: in_waves' of an executor's pull; default: every block, in whole waves):
    (blocks done, and for each its peaks' score, target end and query end (int64 [done,
    top]) and how many it has)."""
    q_codes, q_offsets = concatenate(queries)
    t_codes, t_offsets = concatenate(targets)
    rows_by = worker(backend)
    done, parts = [], []
    if work is None:
        work = in_waves(blocks, slots(backend, scheme, queries, threads), None,
                        per_call(backend))
    for items in work:
        items = np.asarray(items, np.int64)
        for a, b in runs_within((blocks["hi"] - blocks["lo"])[items], per_call(backend)):
            batch = {key: values[items[a:b]] for key, values in blocks.items()}
            keys = rows_by.scan_rows(q_codes, q_offsets, t_codes, t_offsets, batch, scheme,
                                     threads)
            done.append(items[a:b])
            parts.append(rows_by.scan_peaks(keys, batch, top, min_score, threads))
    if not parts:
        return (np.empty(0, np.int64), *(np.empty((0, top), np.int64) for _ in range(3)),
                np.empty(0, np.int64))
    return (np.concatenate(done), *(np.concatenate(column) for column in zip(*parts)))


def hits(backend: Backend, scheme: LocalScheme, queries, targets, blocks: dict, done, score,
         tend, qend, kept, top: int, threads=None, trace: bool = False) -> Hits:
    """The hits of block_peaks' results (of every block, from all workers): the best `top`
    of each (query, target), ordered as scan's, with kernel 2's starts and alignments."""
    filled = np.arange(top)[None, :] < kept[:, None]
    query, target = np.repeat(blocks["query"][done], kept), np.repeat(blocks["target"][done],
                                                                      kept)
    score, qend, tend = score[filled], qend[filled], tend[filled]
    # by (query, target), then best first, then the earlier end: align's best per query
    keep = best_per_query(query * len(targets) + target, score, tend, top)
    query, target, score, qend, tend = (a[keep] for a in (query, target, score, qend, tend))
    log.info("%d hits of %d queries against %d targets", len(score), len(queries),
             len(targets))
    return _located(backend, scheme, queries, targets, query, target, score, qend, tend,
                    threads, trace)


def _located(backend, scheme, queries, targets, query, target, score, qend, tend, threads,
             trace) -> Hits:
    """Kernel 2: each hit's start (starts) and, with trace, its alignment, the global
    alignment of the window between start and end (pairs/align.alignments_of)."""
    qstart, tstart = starts(backend, scheme, queries, targets, query, target, score, qend,
                            tend, threads)
    hits = Hits(query.astype(np.int64), target.astype(np.int64),
                np.arange(len(score), dtype=np.int64), score.astype(np.int64), qstart,
                qend.astype(np.int64), tstart, tend.astype(np.int64))
    if trace:  # each window a sequence of its own, in the window's coordinates
        windows = [targets[r][a - 1:e] for r, a, e in zip(target, tstart, tend)]
        codes, offsets = concatenate(list(queries) + windows)
        spans = hits.take(np.arange(len(score)))
        spans.target = len(queries) + np.arange(len(score), dtype=np.int64)
        spans.tstart, spans.tend = np.ones_like(tstart), tend - tstart + 1
        hits.runs = alignments_of(backend, codes, offsets, spans, scheme, threads)
    return hits


def starts(backend: Backend, scheme: LocalScheme, queries, targets, query, target, score,
           qend, tend, threads=None):
    """The starts (query, target; 1-based) of the hits ending at (qend, tend) with these
    scores: the reverse pass, the backend's anchored scan_rows over each hit's query prefix
    and the target before its end, both reversed. Every cell of that pass holds the best
    alignment from it to the end, so none exceeds the hit's score, and the start is the
    first cell in row-major order that reaches it (align.cu's align_starts, cpu/align.py's
    _reverse): the first row whose key holds the score, at the key's column. Rows: first
    the query's length and an eighth more (most alignments span about as many target
    letters as query letters), then, for hits not found there, all max_span rows that can
    hold the alignment."""
    by = worker(backend)
    xp = by.xp
    reach = np.minimum(tend, max_span(qend, score, scheme))
    qstart, tstart = np.zeros(len(score), np.int64), np.zeros(len(score), np.int64)
    todo = np.arange(len(score))
    for limit in (np.minimum(reach, qend + qend // 8 + 64), reach):
        if not len(todo):
            break
        prefixes = [queries[q][:e][::-1] for q, e in zip(query[todo], qend[todo])]
        windows = [targets[r][e - w:e][::-1]
                   for r, e, w in zip(target[todo], tend[todo], limit[todo])]
        ones = np.arange(len(todo), dtype=np.int64)
        blocks = {"query": ones, "target": ones, "lo": np.zeros_like(ones),
                  "hi": limit[todo].astype(np.int64)}
        keys = by.scan_rows(*concatenate(prefixes), *concatenate(windows), blocks, scheme,
                            threads, anchored=True).astype(xp.int64, copy=False)
        # the rows holding their hit's score, found where the keys are (few leave)
        ends = np.cumsum(blocks["hi"])
        hit_of = xp.searchsorted(xp.asarray(ends), xp.arange(len(keys)), side="right")
        reached = xp.flatnonzero(keys >> COLUMN_BITS == xp.asarray(score[todo])[hit_of])
        key = by.to_host(keys[reached])
        reached = by.to_host(reached)
        found, first = np.unique(np.searchsorted(ends, reached, side="right"),
                                 return_index=True)
        done = todo[found]
        qstart[done] = qend[done] - (COLUMN_MASK - (key[first] & COLUMN_MASK))
        tstart[done] = tend[done] - (reached[first] - (ends - blocks["hi"])[found])
        todo = np.delete(todo, found)
    if len(todo):
        raise RuntimeError(f"scan: no start found for {len(todo)} hits (a kernel's error)")
    return qstart, tstart
