"""`--linkage opti`: OptiClust (opticlust.py), mothur's default clustering, on the close
pairs: the kept pairs at identity >= --id (identity distance), or the pairs of SeqDist
distance <= --cutoff (an edge list holding them, or a full matrix). Writes the OTU tables,
PREFIX.sensspec among them (otus.py) with the MCC that OptiClust maximises.
"""
from __future__ import annotations

import numpy as np

from ..errors import UserError
from .inputs import read_close_pairs, read_seqdist
from .opticlust import opticlust
from .otus import Close, Naming, annotate, centroid_identity, sequence_names, write_tables


def seqdist_pairs(request):
    """(names, origin, i, j) of the pairs within --cutoff of request.distances."""
    r = request
    dist, names = read_seqdist(r)
    if dist.dense is None and r.cutoff > dist.max_distance:
        raise UserError(f"{r.distances}: --cutoff {r.cutoff} is above the edge list's "
                        f"max_distance {dist.max_distance}: pairs within it may be missing")
    i, j = dist.within(r.cutoff)
    return names, r.distances, np.asarray(i, np.int64), np.asarray(j, np.int64)


def cluster(request) -> str:
    r = request
    if r.pairs is not None:
        names, origin = sequence_names(r)
        query, target, ident = read_close_pairs(r.pairs, names, r.identity)
        label, scale = f"{1 - r.identity:.10g}", f"identity {r.identity}"
    else:
        names, origin, query, target = seqdist_pairs(r)
        ident = np.empty(0)
        label, scale = f"{r.cutoff:.10g}", f"SeqDist cutoff {r.cutoff}"
    note = annotate(names, origin, r)
    labels, counts = opticlust(len(names), query, target)
    order = np.argsort(labels, kind="stable")
    clusters = [m.tolist() for m in np.split(order, np.flatnonzero(np.diff(labels[order])) + 1)
                if len(m)]
    uc_identity = (centroid_identity(clusters, note.abundance, query, target, ident)
                   if r.pairs is not None else {})
    written = write_tables(r.prefix, clusters, names, note,
                           Naming(r.relabel, r.sizeout, label), uc_identity,
                           Close(query, target))
    return (f"opti: {len(names)} sequences, {len(query)} close pairs ({scale}), "
            f"{len(clusters)} clusters, MCC {counts.mcc:.6f} -> {', '.join(written)}")
