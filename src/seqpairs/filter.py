"""`seqpairs filter`: the pairs whose real alignment reaches an identity threshold.

With `--scoring seqdist` (the default) the alignment is SeqDist's. Candidates are the
pairs whose identity bound (identity.upper_bound, from the distance stage's counts)
reaches the threshold; no other pair can. Each candidate is traced back
(traceback.py), its exact identity computed (identity.identity) and kept when it reaches
the threshold. The kept pairs are written as a TSV with vsearch's userout field names:

  query, target  ids of sequence i (A, the higher index, as in SeqDist) and j (B)
  id             identity by --iddef, in percent (0-100, like vsearch)
  alnlen         alignment columns without terminal gaps (vsearch's alnlen)
  mism, ids      mismatches, matches
  opens, gaps    gap openings and gap columns, terminal gaps excluded (as vsearch)
  qilo, qihi     first and last query residue in an aligned pair (1-based, vsearch's names)
  tilo, tihi     the same for the target
  ql, tl         sequence lengths
  caln           CIGAR of the whole alignment (see traceback.py: D = gap in the target,
                 I = gap in the query; "=" for identical sequences)
  distance       SeqDist's distance of the pair
  id0 .. id4     identity by each of vsearch's five definitions, in percent
Rows are sorted by (i, j). Terminal gaps are all gap columns before the first and after
the last aligned pair (vsearch trims one gap run at each end; a SeqDist alignment can
end with two).

With `--scoring vsearch` the filter is vsearch's `--allpairs_global --id T` (2.22.1, its
default scoring: scoring.VSEARCH): every pair is aligned globally with that affine scheme
and traced back with vsearch's tie rules (traceback_affine.py), and kept when its
identity, computed with vsearch's arithmetic (identity.vsearch_percent), is
>= 100 * --identity, as vsearch compares. The table has the same columns, with vsearch's
orientation and trimming:
  query, target  the earlier and the later sequence in the FASTA (vsearch's query and
                 target); the CIGAR, qilo .. tihi and ql, tl are of that orientation
  alnlen, opens, gaps, qilo .. tihi
                 without vsearch's terminal gaps: the first and the last run of the
                 alignment when they are gap runs (traceback_affine.py)
  raw            instead of `distance`: the alignment score (vsearch's userout `raw`;
                 higher is better; SeqDist's distance has no counterpart here)
Rows are sorted by (query, target) in FASTA order. Pruning: for iddef 0, 2 and 3 neither
the score nor the lengths bound the identity, so every pair is traced (multi-threaded).
End gaps cost 2 + (k - 1), less than a mismatch's 4 per letter, so an optimal alignment
can be mostly terminal gaps around a short identical overlap (iddef 2: 100% at any score
and lengths) or a short sequence inside a long one (iddef 3: 1 - 2 / longer); and many
matches (iddef 0) go with any score when mismatches and gaps come with them. For iddef 1
and 4 (matches / columns) a pair is skipped when 100.0 * min(ql, tl) / max(ql, tl) <
100.0 * T, which is safe: matches <= the shorter length, columns >= the longer one, and
vsearch's rounded division is monotone. An edge list (--distances) holds SeqDist's
candidates and is refused.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from . import binning, distance
from .distfiles import Edges, read_edges
from .errors import UserError
from .identity import IDDEFS, identity, upper_bound, vsearch_percent
from .scoring import AFFINE, SCHEMES
from .sequences import SequenceSet, read_unique_fasta
from .tables import write_tsv
from .traceback import COUNTS, Alignments, trace_pairs
from .traceback_affine import trace_pairs as trace_affine_pairs

log = logging.getLogger("seqpairs.filter")

COLUMNS = ["query", "target", "id", "alnlen", "mism", "opens", "gaps", "ids", "qilo", "qihi",
           "tilo", "tihi", "ql", "tl", "caln", "distance", "id0", "id1", "id2", "id3", "id4"]
# --scoring vsearch: the score `raw` in place of SeqDist's distance
AFFINE_COLUMNS = [c if c != "distance" else "raw" for c in COLUMNS]
# --scoring vsearch: pairs traced per block (their runs are dropped unless kept)
BLOCK_PAIRS = 1 << 18


def check_edges(edges: Edges, seqs: SequenceSet, threshold: float, iddef: int, path) -> None:
    """UserError unless `edges` belongs to `seqs` and holds every pair that can reach threshold."""
    if edges.n != seqs.n or not np.array_equal(edges.ids, np.asarray(seqs.ids)):
        raise UserError(f"{path}: made from other sequences than the input FASTA "
                        f"({edges.n} sequences, the FASTA has {seqs.n})")
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


def filter_pairs(seqs: SequenceSet, i, j, dist, threshold: float, iddef: int,
                 threads: int | None = None) -> pd.DataFrame:
    """Trace back every pair (i[k], j[k]); the table of those whose identity reaches threshold."""
    order = np.lexsort((j, i))
    i, j, dist = np.asarray(i)[order], np.asarray(j)[order], np.asarray(dist)[order]
    al = trace_pairs(seqs.codes, seqs.offsets, i, j, threads=threads)
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


def filter_edges(seqs: SequenceSet, edges: Edges, threshold: float, iddef: int,
                 threads: int | None = None) -> pd.DataFrame:
    """The kept pairs among the candidates of an edge list."""
    cand = candidates(edges, seqs.lengths, threshold, iddef)
    table = filter_pairs(seqs, edges.i[cand], edges.j[cand], edges.distance[cand], threshold,
                         iddef, threads)
    log.info("%d pairs, %d candidates, %d kept", seqs.n * (seqs.n - 1) // 2, int(cand.sum()),
             len(table))
    return table


def candidate_edges(seqs: SequenceSet, threshold: float, iddef: int, threads=None,
                    backend="auto") -> Edges:
    """Edge list of the pairs whose bound reaches threshold, computed here."""
    bins = binning.make_bins(seqs.lengths, binning.BIN_WIDTH)
    tiles = binning.make_tiles(seqs.lengths, bins, binning.TILE_PAIRS)
    edges, _ = distance.compute(seqs, bins, tiles, backend=backend, threads=threads,
                                max_distance=-math.inf,
                                candidate_identity=threshold, iddef=iddef)
    return edges


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


def affine_table(seqs: SequenceSet, scheme, q, t, threshold: float, iddef: int,
                 threads: int | None = None) -> pd.DataFrame:
    """Trace the pairs (query q[k], target t[k]) with `scheme`; the rows of those whose
    identity (vsearch's percent) is >= 100 * threshold."""
    al = trace_affine_pairs(seqs.codes, seqs.offsets, q, t, scheme, threads=threads)
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


def filter_affine(seqs: SequenceSet, scheme, threshold: float, iddef: int,
                  threads: int | None = None, block_pairs: int = BLOCK_PAIRS) -> pd.DataFrame:
    """The kept pairs among all pairs, query the earlier sequence (vsearch's allpairs_global).

    For iddef 1 and 4 pairs whose length ratio is below the threshold are skipped (the
    module docstring proves it safe); all others are traced.
    """
    lengths = seqs.lengths
    no_pairs = np.zeros(0, dtype=np.int64)
    parts, candidates = [], 0
    for q, t in all_pairs(seqs.n, block_pairs):
        if iddef in (1, 4):  # id <= 100 * shorter / longer, in vsearch's arithmetic
            la, lb = lengths[q], lengths[t]
            fits = 100.0 * np.minimum(la, lb) / np.maximum(la, lb) >= 100.0 * threshold
            q, t = q[fits], t[fits]
        candidates += len(q)
        part = affine_table(seqs, scheme, q, t, threshold, iddef, threads)
        if len(part):  # (an empty part would make the text columns objects)
            parts.append(part)
    table = (pd.concat(parts, ignore_index=True) if parts else
             affine_table(seqs, scheme, no_pairs, no_pairs, threshold, iddef))
    log.info("%d pairs, %d traced, %d kept", seqs.n * (seqs.n - 1) // 2, candidates, len(table))
    return table


def run(args) -> None:
    if not 0.0 <= args.identity <= 1.0:
        raise UserError(f"--identity must be between 0 and 1, not {args.identity}")
    if args.scoring in AFFINE:
        if args.distances:
            raise UserError(f"{args.distances}: an edge list holds the candidates of SeqDist "
                            f"scoring; --scoring {args.scoring} aligns every pair itself, "
                            "so leave out --distances")
        if args.backend == "gpu":
            raise UserError(f"--scoring {args.scoring} traces on the CPU; leave out "
                            "--backend gpu")
    seqs = read_unique_fasta(args.input)
    if seqs.n < 2:
        raise UserError(f"{args.input}: need at least 2 sequences, found {seqs.n}")
    if args.scoring in AFFINE:
        table = filter_affine(seqs, AFFINE[args.scoring], args.identity, args.iddef,
                              args.threads)
    else:
        if args.distances:
            edges = read_edges(args.distances)
            check_edges(edges, seqs, args.identity, args.iddef, args.distances)
        else:
            edges = candidate_edges(seqs, args.identity, args.iddef, args.threads, args.backend)
        table = filter_edges(seqs, edges, args.identity, args.iddef, args.threads)
    write_tsv(args.output, table)


def register(sub) -> None:
    p = sub.add_parser("filter", help="pairs whose real alignment reaches an identity threshold")
    p.add_argument("-i", "--input", required=True, help="unique sequences (FASTA, ACGT)")
    p.add_argument("--distances", help="edge list from `seqpairs distance` (default: computed "
                   "here); it must hold every pair whose bound reaches --identity")
    p.add_argument("--identity", type=float, required=True,
                   help="keep pairs with identity >= this (a fraction, e.g. 0.97)")
    p.add_argument("--iddef", type=int, choices=IDDEFS, default=2,
                   help="vsearch's identity definition (default 2)")
    p.add_argument("--scoring", choices=SCHEMES, default="seqdist",
                   help="scoring scheme: seqdist (default), or vsearch: vsearch's "
                   "--allpairs_global with its default scoring, every pair aligned (no "
                   "--distances)")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto",
                   help="backend of the candidate step without --distances (default auto; "
                   "--scoring vsearch runs on the CPU)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("-o", "--output", required=True, help="kept pairs (TSV)")
    p.set_defaults(func=run)
