"""The filter stage's engine: the pairs whose real alignment reaches an identity threshold.

With `--scoring seqdist` (the default) the alignment is SeqDist's. Candidates are the
pairs whose identity bound (identity.upper_bound, from the distance stage's counts)
reaches the threshold; no other pair can. Each candidate is traced back
(backends/cpu/trace_seqdist.py), its exact identity computed (identity.identity) and kept when it reaches
the threshold. The kept pairs are written as a TSV with vsearch's userout field names:

  query, target  ids of sequence i (A, the higher index, as in SeqDist) and j (B)
  id             identity by --iddef, in percent (0-100, like vsearch)
  alnlen         alignment columns without terminal gaps (vsearch's alnlen)
  mism, ids      mismatches, matches
  opens, gaps    gap openings and gap columns, terminal gaps excluded (as vsearch)
  qilo, qihi     first and last query residue in an aligned pair (1-based, vsearch's names)
  tilo, tihi     the same for the target
  ql, tl         sequence lengths
  caln           CIGAR of the whole alignment (backends/alignments.py: D = gap in the target,
                 I = gap in the query; "=" for identical sequences)
  distance       SeqDist's distance of the pair
  id0 .. id4     identity by each of vsearch's five definitions, in percent
Rows are sorted by (i, j). Terminal gaps are all gap columns before the first and after
the last aligned pair (vsearch trims one gap run at each end; a SeqDist alignment can
end with two).

Under an affine scheme (`--scoring vsearch`: vsearch's `--allpairs_global --id T`, 2.22.1,
with its default scoring) every pair is aligned globally with that scheme, on the chosen
backend, which gives the counts of the path a traceback with vsearch's tie rules takes
(affine_counts: backends/cpu/trace_affine.py, gpu_kernels/affine_trace.cu); a pair is
kept when its identity, computed with vsearch's arithmetic (identity.vsearch_percent), is
>= 100 * --identity, as vsearch compares, and only the kept pairs are traced back (on the
same backend: backends/cpu/trace_affine.py, gpu_kernels/affine_trace.cu) for their
alignments. The table has the same columns, with vsearch's
orientation and trimming:
  query, target  the earlier and the later sequence in the FASTA (vsearch's query and
                 target); the CIGAR, qilo .. tihi and ql, tl are of that orientation
  alnlen, opens, gaps, qilo .. tihi
                 without vsearch's terminal gaps: the first and the last run of the
                 alignment when they are gap runs (backends/cpu/trace_affine.py)
  raw            instead of `distance`: the alignment score (vsearch's userout `raw`;
                 higher is better; SeqDist's distance has no counterpart here)
Rows are sorted by (query, target) in FASTA order. Pruning: for iddef 0, 2 and 3 neither
the score nor the lengths bound the identity, so every pair is aligned.
End gaps cost 2 + (k - 1), less than a mismatch's 4 per letter, so an optimal alignment
can be mostly terminal gaps around a short identical overlap (iddef 2: 100% at any score
and lengths) or a short sequence inside a long one (iddef 3: 1 - 2 / longer); and many
matches (iddef 0) go with any score when mismatches and gaps come with them. For iddef 1
and 4 (matches / columns) a pair is skipped when 100.0 * min(ql, tl) / max(ql, tl) <
100.0 * T, which is safe: matches <= the shorter length, columns >= the longer one, and
vsearch's rounded division is monotone. An edge list (--distances) made under the same
scheme (`seqpairs distance --scoring vsearch`) holds each pair's counts, the same as
affine_counts': its pairs that reach the threshold are traced, no pair is aligned again.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from ..backends.alignments import COUNTS, Alignments
from ..backends.common import AFFINE_COUNTS
from ..errors import UserError
from ..formats.distances import Edges, check_made_from
from ..formats.fasta import SequenceSet
from ..progress import Progress
from .distance import affine_screen
from .identity import IDDEFS, identity, upper_bound, vsearch_percent

log = logging.getLogger("seqpairs.filter")

COLUMNS = ["query", "target", "id", "alnlen", "mism", "opens", "gaps", "ids", "qilo", "qihi",
           "tilo", "tihi", "ql", "tl", "caln", "distance", "id0", "id1", "id2", "id3", "id4"]
# affine schemes: the score `raw` in place of SeqDist's distance
AFFINE_COLUMNS = [c if c != "distance" else "raw" for c in COLUMNS]
# affine schemes: pairs traced per block (their runs are dropped unless kept)
BLOCK_PAIRS = 1 << 18


def check_edges(edges: Edges, seqs: SequenceSet, threshold: float, iddef: int, path,
                scoring: str = "seqdist", source="the input FASTA") -> None:
    """UserError unless `edges` was made under `scoring` from `seqs` (of `source`) and holds
    every pair that can reach threshold."""
    check_made_from(edges, path, seqs.ids, seqs.seqs, source)
    if edges.scoring != scoring:
        raise UserError(f"{path}: made under --scoring {edges.scoring}, so it does not bound "
                        f"identities under --scoring {scoring}; rerun `seqpairs distance` "
                        f"with --scoring {scoring}")
    if edges.max_distance == math.inf:  # it holds every pair
        return
    if edges.iddef != iddef or not edges.candidate_identity <= threshold:
        made = ("without --candidate-identity" if math.isnan(edges.candidate_identity) else
                f"with --candidate-identity {edges.candidate_identity:g} --iddef {edges.iddef}")
        raise UserError(f"{path}: made {made}, so it may lack pairs that reach {threshold:g} "
                        f"by --iddef {iddef}; rerun `seqpairs distance` with "
                        f"--candidate-identity {threshold:g} --iddef {iddef}")


def candidates(edges: Edges, lengths: np.ndarray, threshold: float, iddef: int) -> np.ndarray:
    """Mask of the edges whose identity bound reaches the threshold."""
    bound = upper_bound(iddef, lengths[edges.i], lengths[edges.j], edges.length, edges.matches,
                        edges.aligned, edges.leading)
    return bound >= threshold


def exact_identities(al: Alignments, iddef: int, which=slice(None)) -> np.ndarray:
    """Identity (a fraction) by vsearch's definition iddef of the traced pairs `which`."""
    fields = (al["matches"], al["mismatches"], al["columns"], al["terminal_gaps"],
              al["openings"], al.la, al.lb)
    args = zip(*(f[which].tolist() for f in fields))
    return np.array([identity(iddef, *a) for a in args], dtype=np.float64)


def filter_pairs(seqs: SequenceSet, i, j, dist, threshold: float, iddef: int, scheme, cpu,
                 threads: int | None = None) -> pd.DataFrame:
    """Trace back every pair (i[k], j[k]) under a SeqDistScheme on the `cpu` backend, in
    steps of about BLOCK_PAIRS (progress on the log); the table of those whose identity
    reaches threshold."""
    order = np.lexsort((j, i))
    i, j, dist = np.asarray(i)[order], np.asarray(j)[order], np.asarray(dist)[order]
    lengths = seqs.lengths
    progress = Progress(log, "filter", float((lengths[i] * lengths[j]).sum()), "cells")
    parts = []
    for start in range(0, len(i), BLOCK_PAIRS):
        step = slice(start, start + BLOCK_PAIRS)
        part = traced_table(seqs, i[step], j[step], dist[step], threshold, iddef, scheme, cpu,
                            threads)
        if len(part):  # (an empty part would make the text columns objects)
            parts.append(part)
        progress.update(float((lengths[i[step]] * lengths[j[step]]).sum()))
    progress.finish()
    if parts:
        return pd.concat(parts, ignore_index=True)
    return traced_table(seqs, i[:0], j[:0], dist[:0], threshold, iddef, scheme, cpu, threads)


def traced_table(seqs: SequenceSet, i, j, dist, threshold: float, iddef: int, scheme, cpu,
                 threads: int | None = None) -> pd.DataFrame:
    """filter_pairs of one step."""
    al = cpu.trace_seqdist(seqs.codes, seqs.offsets, i, j, scheme, threads)
    exact = exact_identities(al, iddef)
    keep = np.flatnonzero(exact >= threshold)
    counts = {name: al[name][keep] for name in COUNTS}
    ids = np.asarray(seqs.ids, dtype=object)
    table = pd.DataFrame({
        "query": ids[i[keep]],
        "target": ids[j[keep]],
        "id": 100.0 * exact[keep],
        "alnlen": counts["columns"] - counts["terminal_gaps"],
        "mism": counts["mismatches"],
        "opens": counts["openings"] - counts["terminal_openings"],
        "gaps": counts["gaps"] - counts["terminal_gaps"],
        "ids": counts["matches"],
        "qilo": counts["qlo"], "qihi": counts["qhi"], "tilo": counts["tlo"], "tihi": counts["thi"],
        "ql": al.la[keep], "tl": al.lb[keep],
        "caln": al.cigars(keep),
        "distance": dist[keep],
    })
    for k in IDDEFS:
        table[f"id{k}"] = 100.0 * exact_identities(al, k, keep)
    return table[COLUMNS]


def filter_edges(seqs: SequenceSet, edges: Edges, threshold: float, iddef: int, scheme, cpu,
                 threads: int | None = None) -> pd.DataFrame:
    """The kept pairs among the candidates of an edge list made under `scheme`."""
    cand = candidates(edges, seqs.lengths, threshold, iddef)
    table = filter_pairs(seqs, edges.i[cand], edges.j[cand], edges.distance[cand], threshold,
                         iddef, scheme, cpu, threads)
    log.info("%d pairs, %d candidates, %d kept", seqs.n * (seqs.n - 1) // 2, int(cand.sum()),
             len(table))
    return table


def all_pairs(n: int, block_pairs: int = BLOCK_PAIRS):
    """Every pair (query q, target t), q < t < n, in order, as blocks of about block_pairs."""
    q0 = 0
    while q0 < n - 1:
        q1, count = q0, 0
        while q1 < n - 1 and (count == 0 or count + n - 1 - q1 <= block_pairs):
            count += n - 1 - q1
            q1 += 1
        queries = np.arange(q0, q1, dtype=np.int64)
        yield (np.repeat(queries, n - 1 - queries),
               np.concatenate([np.arange(q + 1, n, dtype=np.int64) for q in range(q0, q1)]))
        q0 = q1


def affine_table(seqs: SequenceSet, trace, q, t, threshold: float,
                 iddef: int) -> pd.DataFrame:
    """Trace the pairs (query q[k], target t[k]) with `trace` (a backend's trace_affine
    kernel); the rows of those whose identity (vsearch's percent) is >= 100 * threshold."""
    al = trace(q, t)
    c = {name: al[name] for name in COUNTS}
    percent = {k: vsearch_percent(k, c["matches"], c["mismatches"], c["columns"],
                                  c["terminal_gaps"], c["openings"], al.la, al.lb)
               for k in IDDEFS}
    keep = np.flatnonzero(percent[iddef] >= 100.0 * threshold)
    ids = np.asarray(seqs.ids, dtype=object)
    table = pd.DataFrame({
        "query": ids[q[keep]],
        "target": ids[t[keep]],
        "id": percent[iddef][keep],
        "alnlen": (c["columns"] - c["terminal_gaps"])[keep],
        "mism": c["mismatches"][keep],
        "opens": (c["openings"] - c["terminal_openings"])[keep],
        "gaps": (c["gaps"] - c["terminal_gaps"])[keep],
        "ids": c["matches"][keep],
        "qilo": c["qlo"][keep], "qihi": c["qhi"][keep],
        "tilo": c["tlo"][keep], "tihi": c["thi"][keep],
        "ql": al.la[keep], "tl": al.lb[keep],
        "caln": al.cigars(keep),
        "raw": al.score[keep],
    })
    for k in IDDEFS:
        table[f"id{k}"] = percent[k][keep]
    return table[AFFINE_COLUMNS]


def affine_rows(seqs: SequenceSet, trace, blocks, threshold: float, iddef: int,
                counted: str | None) -> pd.DataFrame:
    """affine_table of each block of pairs (q, t), as one table. `counted`: where the
    blocks' pairs were counted as reaching the threshold (then their traceback must keep
    every one of them), or None."""
    parts = []
    for q, t in blocks:
        part = affine_table(seqs, trace, q, t, threshold, iddef)
        if counted and len(part) != len(q):
            raise RuntimeError(f"{counted}: the affine counts of {len(q)} pairs reach the "
                               f"threshold, the traceback of {len(part)}")
        if len(part):  # (an empty part would make the text columns objects)
            parts.append(part)
    if parts:
        return pd.concat(parts, ignore_index=True)
    no_pairs = np.zeros(0, dtype=np.int64)
    return affine_table(seqs, trace, no_pairs, no_pairs, threshold, iddef)


def reaching(counts, la, lb, threshold: float, iddef: int) -> np.ndarray:
    """Positions of the pairs whose AFFINE_COUNTS (a dict) give an identity (vsearch's
    percent, exact) >= 100 * threshold."""
    percent = vsearch_percent(iddef, counts["matches"], counts["mismatches"],
                              counts["columns"], counts["terminal_gaps"], counts["openings"],
                              la, lb)
    return np.flatnonzero(percent >= 100.0 * threshold)


def filter_affine(seqs: SequenceSet, scheme, backend, threshold: float, iddef: int,
                  threads: int | None = None, block_pairs: int | None = None,
                  prune: bool = True) -> pd.DataFrame:
    """The kept pairs among all pairs, query the earlier sequence (vsearch's allpairs_global).

    Every pair's traced counts come from the backend's affine_counts and give its exact
    identity; only the pairs that reach the threshold are traced, on the backend, for
    their alignments. Where the counts are the traceback itself (the CPU), every pair is
    traced once instead. For iddef 1 and 4 pairs whose length ratio is below the
    threshold are skipped (the module docstring proves it safe); with `prune`, a
    backend's affine screen drops pairs that provably miss the threshold before their
    counts (docs/pruning.md, "Affine schemes").
    """
    lengths = seqs.lengths
    trace = backend.trace_affine(seqs.codes, seqs.offsets, scheme, threads)
    count = (None if backend.affine_counts_traced else
             backend.affine_counts(seqs.codes, seqs.offsets, scheme, threads))
    # where every pair is traced anyway (the CPU) a screen spares nothing
    may_pass = (None if count is None else
                affine_screen(backend, seqs, scheme, threads, threshold, iddef, prune))
    progress = Progress(log, "filter", seqs.n * (seqs.n - 1) / 2, "pairs")
    aligned = 0

    def blocks():
        nonlocal aligned
        for q, t in all_pairs(seqs.n, block_pairs or backend.pairs_per_batch):
            progress.update(len(q))
            if iddef in (1, 4):  # id <= 100 * shorter / longer, in vsearch's arithmetic
                la, lb = lengths[q], lengths[t]
                fits = 100.0 * np.minimum(la, lb) / np.maximum(la, lb) >= 100.0 * threshold
                q, t = q[fits], t[fits]
            if may_pass:
                maybe = may_pass(q, t)
                q, t = q[maybe], t[maybe]
            aligned += len(q)
            if count is not None:  # trace only the pairs whose counts reach the threshold
                reach = reaching(dict(zip(AFFINE_COUNTS, count(q, t))), lengths[q],
                                 lengths[t], threshold, iddef)
                q, t = q[reach], t[reach]
            yield q, t

    table = affine_rows(seqs, trace, blocks(), threshold, iddef,
                        None if count is None else f"{backend.name} backend")
    progress.finish()
    log.info("%d pairs, %d aligned on the %s backend%s, %d kept", seqs.n * (seqs.n - 1) // 2,
             aligned, backend.name, " after its screen" if may_pass else "", len(table))
    return table


def filter_affine_edges(seqs: SequenceSet, edges: Edges, threshold: float, iddef: int,
                        scheme, backend, threads: int | None = None,
                        block_pairs: int = BLOCK_PAIRS) -> pd.DataFrame:
    """The kept pairs of an edge list made under the affine `scheme`: its counts give each
    pair's identity exactly, so only the pairs that reach the threshold are traced, on
    the backend (query j, the earlier sequence, as the counts are)."""
    cand = reaching(edges.values, seqs.lengths[edges.j], seqs.lengths[edges.i], threshold,
                    iddef)
    q, t = edges.j[cand], edges.i[cand]
    order = np.lexsort((t, q))
    q, t = q[order], t[order]
    blocks = ((q[k:k + block_pairs], t[k:k + block_pairs])
              for k in range(0, len(q), block_pairs))
    trace = backend.trace_affine(seqs.codes, seqs.offsets, scheme, threads)
    table = affine_rows(seqs, trace, blocks, threshold, iddef, "the edge list")
    log.info("%d pairs, %d in the edge list, %d kept", seqs.n * (seqs.n - 1) // 2, len(edges),
             len(table))
    return table
