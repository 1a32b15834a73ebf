"""The engine of `seqpairs align`: the best alignment of each pair under an AlignMode
(scoring/local.py) in three passes, as ADEPT does: score and end of every pair (the
backend's align_ends), then, for the pairs kept (--min-score, the best per query), the
start by a reverse pass from the end (align_starts), then, when asked, the alignment
itself by a global traceback of the window between start and end (trace_windows: the
window's global optimum is the local one, so the traceback needs no more than the
window)."""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..backends import Backend
from ..backends.common import runs_within
from ..errors import UserError
from ..scoring import LocalScheme
from ..scoring.local import AlignMode

log = logging.getLogger("seqpairs.align")


@dataclass
class Runs:
    """The traced alignments of the hits, as runs: pair k's are ops/lengths[offsets[k]:
    offsets[k + 1]] from the start (op codes index backends.alignments.WINDOW_OPS), with their
    counts of identical and different letter pairs and of gap openings."""

    offsets: np.ndarray
    ops: np.ndarray
    lengths: np.ndarray
    matches: np.ndarray
    mismatches: np.ndarray
    openings: np.ndarray


@dataclass
class Hits:
    """The alignments kept: query and target of each (sequence indices), its pair number
    (the order pairs were given in), score and 1-based inclusive coordinates (0 where the
    alignment holds no letter of that sequence), and runs when traced."""

    query: np.ndarray
    target: np.ndarray
    pair: np.ndarray
    score: np.ndarray
    qstart: np.ndarray
    qend: np.ndarray
    tstart: np.ndarray
    tend: np.ndarray
    runs: Runs | None = None

    def take(self, keep: np.ndarray) -> Hits:
        return Hits(*(getattr(self, name)[keep] for name in FIELDS))


FIELDS = ("query", "target", "pair", "score", "qstart", "qend", "tstart", "tend")


def best_per_query(query: np.ndarray, score: np.ndarray, pair: np.ndarray, top: int
                   ) -> np.ndarray:
    """Indices of the `top` best scores of each query (ties: the earlier pair), ordered by
    query, then score (best first), then pair."""
    order = np.lexsort((pair, -score.astype(np.int64), query))
    grouped = query[order]
    first = np.r_[0, np.flatnonzero(grouped[1:] != grouped[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(first, np.diff(np.r_[first, len(order)]))
    return order[rank < top]


def align(backend: Backend, scheme: LocalScheme, mode: AlignMode, codes: np.ndarray,
          offsets: np.ndarray, batches: Iterable[tuple[np.ndarray, np.ndarray]],
          threads: int | None = None, trace: bool = False, min_score: int | None = None,
          top: int | None = None) -> Hits:
    """The alignments of the pairs of `batches` ((query indices, target indices) into the
    sequences codes/offsets, numbered in order across batches) scoring at least
    `min_score`, at most `top` per query; pairs in the order given, or with `top` by query
    and best score first."""
    if scheme.gap_open + scheme.gap_extend < 1:
        raise UserError("align: a gap must cost something (gap-open + gap-extend >= 1): "
                        "free gaps leave the best alignment's extent undefined")
    ends = backend.align_ends(codes, offsets, scheme, mode, threads)
    kept, numbered = [], 0
    for queries, targets in batches:
        pair = np.arange(numbered, numbered + len(queries), dtype=np.int64)
        numbered += len(queries)
        score, qend, tend = (backend.to_host(a) for a in ends(queries, targets))
        hits = Hits(np.asarray(queries, np.int64), np.asarray(targets, np.int64), pair,
                    score, np.zeros_like(qend), qend, np.zeros_like(tend), tend)
        if min_score is not None:
            hits = hits.take(hits.score >= min_score)
        kept.append(hits)
        if top is not None:  # bounded memory: the best so far only
            kept = [_concatenate(kept)]
            kept = [kept[0].take(best_per_query(kept[0].query, kept[0].score,
                                                kept[0].pair, top))]
    hits = _concatenate(kept)
    log.info("%d pairs aligned, %d kept", numbered, len(hits.score))
    return locate(backend, scheme, mode, codes, offsets, hits, threads, trace)


def locate(backend: Backend, scheme: LocalScheme, mode: AlignMode, codes: np.ndarray,
           offsets: np.ndarray, hits: Hits, threads: int | None = None,
           trace: bool = False) -> Hits:
    """The hits (score and ends known) with their starts, by the reverse pass from each
    end, and with trace their alignments (kernel 2 of SSCA#1); hits changed in place."""
    starts = backend.align_starts(codes, offsets, scheme, mode, threads)
    step = backend.pairs_per_batch
    for lo in range(0, len(hits.score), step):
        part = slice(lo, lo + step)
        qstart, tstart = (backend.to_host(a) for a in starts(
            hits.query[part], hits.target[part], hits.score[part], hits.qend[part],
            hits.tend[part]))
        hits.qstart[part], hits.tstart[part] = qstart, tstart
    hits.tend = np.where(hits.tstart == 0, 0, hits.tend)  # no target letter aligned
    if trace:
        hits.runs = alignments_of(backend, codes, offsets, hits, scheme, threads)
    return hits


def _concatenate(parts: list[Hits]) -> Hits:
    if not parts:
        empty = np.empty(0, np.int64)
        return Hits(*(empty for _ in FIELDS))
    return Hits(*(np.concatenate([getattr(p, name) for p in parts]).astype(np.int64, copy=False)
                  for name in FIELDS))


def alignments_of(backend: Backend, codes, offsets, hits: Hits, scheme, threads) -> Runs:
    """The alignments of every hit (its window between start and end), in batches of at
    most the backend's trace_cells window cells."""
    parts = []
    for lo, hi in _spans(hits, backend.trace_cells):
        part = slice(lo, hi)
        run_offsets, ops, lengths, matches, mismatches, openings, _ = backend.trace_windows(
            codes, offsets, hits.query[part], hits.target[part], hits.qstart[part],
            hits.qend[part], hits.tstart[part], hits.tend[part], scheme, threads)
        parts.append((run_offsets, ops, lengths, matches, mismatches, openings))
    offsets_all = [np.zeros(1, np.int64)]
    for run_offsets, *_ in parts:
        offsets_all.append(run_offsets[1:] + offsets_all[-1][-1])
    return Runs(np.concatenate(offsets_all),
                *(np.concatenate([p[k] for p in parts]) if parts else np.empty(0, np.int64)
                  for k in range(1, 6)))


def _spans(hits: Hits, cells: float):
    """(lo, hi) batches of hits whose windows hold at most `cells` cells together (one
    hit a batch where its own window is larger)."""
    size = (np.maximum(hits.qend - np.maximum(hits.qstart, 1) + 1, 0) + 1) * \
        (np.maximum(hits.tend - np.maximum(hits.tstart, 1) + 1, 0) + 1)
    return runs_within(size, cells)
