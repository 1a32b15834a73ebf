"""Greedy centroid clustering (`--linkage greedy`), vsearch --cluster_size style: sequences in decreasing
abundance, ties in input order (unique.fasta's order). Each sequence joins, among the
existing centroids it has a pair with at identity >= --identity (the filter's kept pairs,
--pairs, columns `query`, `target`, `id`), the one of highest identity, ties to the
earliest centroid; with none it becomes a centroid. This is vsearch's choice with
maxaccepts 1 when its candidates are tried in order of decreasing identity (what an
exhaustive search, --maxaccepts 0 --maxrejects 0, also picks); vsearch's default k-mer
order may accept a lower-identity centroid first. `id` is in percent, as the filter and
vsearch write it; a pair counts when id >= 100 * --identity, so a pair the filter kept
at the same --identity always counts. With --psse (`seqpairs psse`'s table of the same
pairs, in the same order) only the pairs it marks `significant` count.
"""
from __future__ import annotations

import numpy as np

from .inputs import read_pairs, read_significant
from .otus import Close, Naming, annotate, sequence_names, write_tables


def greedy(abundance: np.ndarray, query, target, ident, identity: float
           ) -> tuple[list[list[int]], dict[int, float]]:
    """Abundance-ordered centroid clustering (see the module docstring for the rule): the
    clusters, and each joined sequence's identity (percent) to its centroid.

    `ident` in percent, `identity` a fraction.
    """
    n = len(abundance)
    order = np.argsort(-abundance, kind="stable")
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    keep = ident >= 100 * identity
    a = np.concatenate([query[keep], target[keep]])
    b = np.concatenate([target[keep], query[keep]])
    s = np.concatenate([ident[keep], ident[keep]])
    earlier = rank[b] < rank[a]  # only sequences seen before can be centroids
    a, b, s = a[earlier], b[earlier], s[earlier]
    # per sequence, its candidates by decreasing identity, ties to the earliest
    by = np.lexsort((rank[b], -s, rank[a]))
    a, b, s = a[by], b[by], s[by]
    starts = np.searchsorted(rank[a], np.arange(n + 1))
    centroid = np.full(n, -1, np.int64)
    clusters: dict[int, list[int]] = {}
    joined: dict[int, float] = {}
    for r, x in enumerate(order.tolist()):
        candidates = zip(b[starts[r]:starts[r + 1]].tolist(), s[starts[r]:starts[r + 1]].tolist())
        hit, percent = next(((c, p) for c, p in candidates if centroid[c] == c), (x, None))
        centroid[x] = hit
        clusters.setdefault(hit, []).append(x)
        if percent is not None:
            joined[x] = percent
    return [sorted(m) for m in clusters.values()], joined


def cluster(request) -> str:
    """Greedy clustering of request.pairs (only the significant ones with request.psse)."""
    r = request
    names, origin = sequence_names(r)
    note = annotate(names, origin, r)
    query, target, ident = read_pairs(r.pairs, {name: k for k, name in enumerate(names)})
    significance = ""
    if r.psse is not None:
        keep = read_significant(r.psse, r.pairs, [names[k] for k in query],
                                [names[k] for k in target])
        significance = f" ({int(keep.sum())} of {len(keep)} pairs significant in {r.psse})"
        query, target, ident = query[keep], target[keep], ident[keep]
    clusters, joined = greedy(note.abundance, query, target, ident, r.identity)
    close = ident >= 100 * r.identity
    written = write_tables(r.prefix, clusters, names, note,
                           Naming(r.relabel, r.sizeout, f"{1 - r.identity:.10g}"), joined,
                           Close(query[close], target[close]))
    return (f"greedy: {len(names)} sequences, {len(clusters)} clusters at identity "
            f"{r.identity}{significance} -> {', '.join(written)}")
