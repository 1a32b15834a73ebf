"""Compute backends: the pairwise kernels on CPU cores (Numba, backends/cpu/) or on an
NVIDIA GPU (CUDA C from gpu_kernels/ through CuPy, backends/gpu/), behind one contract.

`select(name, device)` chooses the backend once, for every stage: "cpu", "gpu", or "auto"
(the GPU when CuPy sees one). A Backend holds one factory per kernel family; all
backends compute the same function: FP64 results identical bit for bit, integer results
identical, each family pinned by a plain reference in tests/ and by tests/gpu.

Kernel families (sequences as scoring.alphabet codes: `codes` end to end, `offsets`
where each starts, as formats.fasta.SequenceSet holds them):

  seqdist(codes, offsets, scheme: SeqDistScheme, threads) -> kernel (pa, pb) ->
      cost (float64), length, matches, aligned, leading (int32): docs/seqdist.md, the counts
      of common.unpack
  seqdist_screen(...) -> kernel (pa, pb) -> cost, length, matches, aligned pairs; the same
      cost and length as seqdist's at fewer instructions per cell, for a first pass (pairs.
      identity.screen_bound). None where the backend has no cheaper pass (the CPU).
      `screen_cost`: a screen cell's cost against a seqdist cell.
  seqdist_dense(...) -> kernel (pa, pb) -> cost (float64), length (int32): the same cost
      and length as seqdist's, all a distance needs, for the dense outputs (every pair's
      distance) at the fewest instructions per cell the backend has.
  seqdist_band(codes, offsets, scheme: SeqDistScheme, threads) -> kernel (pa, pb, width,
      lower=0) -> exact (bool), cost (float64), length, matches, aligned, leading (int32),
      upper (float64): the band |j - i| <= width with the last row and column, the cells
      outside it bounded by a lower band of half-width `lower` (none when lower <= width),
      and a certificate (docs/pruning.md): where exact, cost and counts are seqdist's bit
      for bit; elsewhere cost is a lower bound on seqdist's cost (counts undefined); upper
      is an upper bound. `band_cost`: the widths the backend runs well, narrowest first,
      and their costs; `band_lower`: the lower band it runs with each (none if absent);
      `band_shared`: the q-gram share below which pairs skip the bands.
  seqdist_upper(codes, offsets, scheme: SeqDistScheme, threads) -> kernel (pa, pb, width) ->
      upper (float64): an upper bound on seqdist's cost from the cheapest path through
      seqdist_band's cells with every paid gap at its dearest cost; cheaper than the band.
      `upper_cost`: its widths, tried in turn (narrowest first), and their costs.
  seqdist_relaxed(codes, offsets, scheme: SeqDistScheme, threads) -> kernel (pa, pb, lam,
      t, upper) -> float64: per pair a lower bound on min over paths of cost' - lam g, g =
      (1 - t) matches - t (mismatches + gap columns between the first and last aligned
      pair), over the paths costing at most upper[k] (an upper bound on seqdist's cost;
      None: all) (docs/pruning.md, section 6): above that upper bound, the pair's iddef 2
      identity is below t. None where the backend has none (the GPU); `relaxed_cost`: a
      cell's cost against a seqdist cell (its cells: within common.path_diagonals).
  `prune_least_cells`: the pruning's families (seqdist_band, seqdist_upper,
      seqdist_relaxed, qgram_shared) run only in runs of at least this many cells; smaller
      ones are aligned in full, where the kernels' first compilation would cost more than
      they spare (pairs/prune.worth_pruning).
  qgram_shared(codes, offsets, q, bits, threads) -> kernel (pa, pb) -> int32: per pair at
      least the number of q-gram positions of either sequence whose q-gram occurs in the
      other (the smaller count), from presence bitsets of 2^bits bits (docs/pruning.md);
      kernel.densest(pa, pb, least, density) -> float64: per pair the smaller over its
      two sequences of the most, over runs of at least least[k] consecutive q-gram
      positions of the one, of (the run's positions counted so) - density x (its
      positions), -inf where it has fewer (the windowed filter of docs/pruning.md,
      section 4), each sum rounded as written (no fused multiply-add).
  affine(codes, offsets, scheme: AffineScheme, threads) -> kernel (pa, pb) -> score,
      length (int32): scoring/affine.py
  affine_counts(codes, offsets, scheme: AffineScheme, threads) -> kernel (pa, pb) ->
      score, matches, mismatches, openings, columns, terminal_gaps, terminal_openings
      (int32; common.AFFINE_COUNTS): the counts of the alignment trace_affine takes (vsearch's
      choice among equal scores, its terminal gaps), without the alignment itself
  affine_screen(codes, offsets, scheme: AffineScheme, threads) -> kernel (pa, pb, alpha,
      beta) -> score, weight (int32): the optimal score and the largest alpha x matches -
      beta x mismatches among the alignments with that score, an exact first pass of the
      affine distance stage (pairs.identity.AffineScreen); the factory returns None where
      the scheme does not fit the kernel. None where the backend has no cheaper pass (the
      CPU: its affine_counts is faster than its score kernel).
  local_scores(scheme: LocalScheme, queries, targets, pairs, keys, shuffles, seed, threads,
               profiles=None) ->
      real (int32[P]), shuffled (int32[P, shuffles]): Smith-Waterman-Gotoh scores of each
      pair (pairs[k] = query row, target row) and of its query against shuffles of its
      target, target t's shuffles keyed by keys[t] (scoring/local.py, stats/shuffle.py);
      profiles[q] (int32 [m, K]), if given, scores query q's positions instead of the
      matrix (PSSMs)
  trace_seqdist(codes, offsets, pa, pb, scheme, threads) -> alignments with counts and
      runs (backends/alignments.py); CPU only (None elsewhere): the filter traces SeqDist
      on CPU cores whatever the backend of its candidates.
  trace_affine(codes, offsets, scheme: AffineScheme, threads) -> kernel (pa, pb) ->
      alignments.ScoredAlignments: the alignment with vsearch's choice among equal scores
      (backends/cpu/trace_affine.py); affine_counts' counts are its counts.
      `affine_counts_traced`: the backend's affine_counts is this traceback itself (the
      CPU), so a caller that traces every pair anyway skips the counts.

  align_ends(codes, offsets, scheme: LocalScheme, mode: AlignMode, threads) -> kernel
      (pa, pb) -> score, query end, target end (int32; 1-based): the best alignment of
      query pa against target pb under the mode (scoring/local.py's AlignMode: which end
      among equal scores), 0, 0 for a local score of 0
  align_starts(codes, offsets, scheme, mode, threads) -> kernel (pa, pb, score, qend,
      tend) -> query start, target start (int32): AlignMode's start of that alignment,
      by a reverse pass from the end; target start 0 where a semi-global alignment holds
      no target letter.
  trace_windows(codes, offsets, pa, pb, qstart, qend, tstart, tend, scheme, threads) ->
      run offsets, ops, lengths, matches, mismatches, gap openings, score: the global
      alignment of each window (query qstart..qend against target tstart..tend) as runs
      of alignments.WINDOW_OPS; `trace_cells`: the window cells a call should hold at most
      (pairs/align.py's batches).
  scan_rows(q_codes, q_offsets, t_codes, t_offsets, blocks, scheme, threads,
            anchored=False) -> keys (int64, or uint32 where they fit; the backend's array):
      for each block of a query against a long target (pairs/scan.py), the key
      (common.COLUMN_BITS) of each of its rows lo + 1 .. hi: the best local score of an
      alignment ending at that target letter and its first query column, block after
      block. anchored: the recurrence with borders that pay their gaps and no floor at 0
      (the best alignment from each cell to the border's corner; kernel 2's reverse pass
      over reversed windows), keys of max(H, 0).
  scan_slots(scheme, query_length, threads) -> int: how many blocks of a query of that length
      scan_rows computes at once (pairs/scan.py sizes blocks to fill whole waves of them);
      `scan_rows_per_call`: the rows of blocks a call takes at most.
  scan_peaks(keys, blocks, top, min_score, threads) -> score, target end, query end (int64
      [blocks, top], unordered, the first `kept` of each row filled), kept (int64 [blocks]):
      each block's best `top` peaks (pairs/scan.py) from scan_rows' keys of the same
      blocks (the backend's array), as host arrays.

A kernel takes pair indices (pa[k] is A, pb[k] is B) as arrays of the backend's array
module (`xp`) and returns arrays of it; the GPU kernels also take host arrays and then
return host arrays. `to_host` brings an array to NumPy. `pairs_per_batch` is how many
pairs a caller should hand a kernel at a time. `threads` is the CPU's thread count
(ignored by the GPU); `device` the GPU of this worker (parallel.Executor.device).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from ..errors import UserError

NAMES = ("auto", "cpu", "gpu")
# the GPU with the CPU cores beside it, for the stages that share work between them
HYBRID = "hybrid"


@dataclass(frozen=True)
class Backend:
    name: str
    xp: ModuleType
    to_host: Callable
    pairs_per_batch: int
    seqdist: Callable
    seqdist_screen: Callable | None
    seqdist_dense: Callable
    seqdist_band: Callable | None
    seqdist_upper: Callable | None
    qgram_shared: Callable | None
    affine: Callable
    affine_counts: Callable
    local_scores: Callable
    trace_affine: Callable
    affine_screen: Callable | None = None
    trace_seqdist: Callable | None = None
    align_ends: Callable | None = None
    align_starts: Callable | None = None
    trace_windows: Callable | None = None
    scan_rows: Callable | None = None
    scan_peaks: Callable | None = None
    scan_slots: Callable | None = None
    scan_rows_per_call: int = 1 << 26  # row keys of 8 bytes: 512 MiB
    trace_cells: float = 1 << 28  # window cells a trace_windows call holds at most
    affine_counts_traced: bool = False
    # cells a kernel call takes at most (a caller's step: progress, memory); inf: no limit
    cells_per_call: float = math.inf
    # the distance stage gathers the pairs that pruning leaves to the full kernel from
    # batch after batch until this many, then aligns them in one call: a GPU's
    # one-thread-per-pair kernel takes a pair's whole serial time for a call of a few pairs
    full_pairs_per_call: int = 0
    # seqdist_band's half-widths, tried in turn (narrowest first), each with the cost of a
    # band cell relative to a cell of what aligns the rest (pairs/prune.py: which bands pay)
    band_cost: dict[int, float] = field(default_factory=dict)
    band_lower: dict[int, int] = field(default_factory=dict)  # lower band per width
    # bands run on the pairs whose shared q-gram positions (qgram_shared) are at least this
    # share of the shorter sequence's; the others seldom certify and go to the full kernel
    # at once (which pairs run a band changes no value): of a 16S-like community's pairs
    # that the counting filter leaves (half of them kept), those at 0.8 are 57%, 93% of them
    # kept, and hold 99% of the kept pairs (benchmarks/RESULTS.md, "A lower band for the
    # certificate"); a wide lower band certifies more of the others
    band_shared: float = 0.8
    upper_cost: dict[int, float] = field(default_factory=dict)  # seqdist_upper's, likewise
    seqdist_relaxed: Callable | None = None
    relaxed_cost: float = 1.0
    # the pruning kernels (q-grams, upper bounds, bands, relaxed) run only in runs of at
    # least this many cells (pairs/prune.worth_pruning): below it, their first
    # compilation on a machine costs more than they can spare
    prune_least_cells: float = 0.0
    # bytes for the q-gram bitsets of all sequences (pairs/prune.qgram_bits): fewer bits a
    # sequence fold more q-grams together, and the counting filter drops fewer pairs
    qgram_memory: int = 64 << 20
    # a seqdist_screen cell's cost relative to a seqdist cell (pairs/distance.py: where the
    # screen pays)
    screen_cost: float = 1.0
    # the backend aligning work beside this one in the stages that share it (the CPU cores
    # beside a GPU: "hybrid"); None: this backend alone
    helper: Backend | None = None


def select(name: str = "auto", device: int = 0) -> Backend:
    """The backend `name` (auto: the GPU when CuPy sees one, else the CPU; hybrid: the GPU
    with the CPU backend as its helper); a GPU backend computes on GPU `device` modulo the
    GPUs visible."""
    from . import gpu

    if name not in (*NAMES, HYBRID):
        raise UserError(f"backend must be one of {', '.join(NAMES)}, {HYBRID}, not {name!r}")
    if name == "cpu" or (name == "auto" and not gpu.available()):
        from . import cpu

        return cpu.BACKEND
    if not gpu.available():
        raise UserError(f"--backend {name}: no CUDA GPU visible to CuPy (is cupy installed?)")
    if name == HYBRID:
        from . import cpu

        return dataclasses.replace(gpu.backend(device), helper=cpu.BACKEND)
    return gpu.backend(device)
