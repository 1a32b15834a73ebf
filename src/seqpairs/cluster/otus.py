"""The OTU tables of every clustering method (hierarchical ones at --cutoff, merges strictly
below it):
- PREFIX.membership.tsv: `id`, `cluster`, `centroid`, one row per sequence in input order.
- PREFIX.otu_table.tsv (needs --abundance): `cluster`, `centroid`, one column per
  sample, `total`: summed counts of the cluster's members; the same counts as BIOM 1.0
  JSON in PREFIX.otu_table.biom (interop.py).
- PREFIX.centroids.fasta (needs --fasta): `>CENTROID;size=N`, N the cluster's total
  abundance, then the centroid's sequence.
The centroid is the most abundant member, ties to the earliest in input order (for
greedy that is the seed). Clusters are numbered 1, 2, ... by decreasing abundance of
their centroid, ties in input order. Abundance is abundance.tsv's `total`, else the
FASTA's `;size=`, else 1 for every sequence.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import UserError
from ..formats.atomic import atomic_open
from ..formats.interop import write_biom
from .inputs import check_unique


@dataclass
class Annotation:
    """What --fasta and --abundance tell about the clustered sequences, in their order."""

    abundance: np.ndarray
    counts: pd.DataFrame | None  # per-sample counts with `total`, rows in sequence order
    seqs: list[str] | None


def align_ids(names: list[str], origin: str, other: list[str], source: str) -> np.ndarray:
    """Positions in `other` (read from `source`) of each of `names` (from `origin`).

    Both must hold the same ids, in any order.
    """
    check_unique(source, other)
    position = {name: k for k, name in enumerate(other)}
    missing = [name for name in names if name not in position]
    if missing:
        raise UserError(f"{source}: no id {missing[0]!r}, which {origin} has")
    if len(other) != len(names):
        known = set(names)
        extra = next(name for name in other if name not in known)
        raise UserError(f"{source}:{extra}: id not in {origin}")
    return np.array([position[name] for name in names], np.int64)


def annotate(names: list[str], origin: str, request) -> Annotation:
    """The abundances, sample counts and sequences of `names` (read from `origin`) from the
    request's FASTA and abundance table, whichever it has."""
    fasta, table = request.fasta, request.abundance
    seqs, abundance, counts = None, np.ones(len(names), np.int64), None
    if fasta is not None:
        at = align_ids(names, origin, fasta.ids, request.fasta_path)
        seqs = [fasta.seqs[k] for k in at]
        abundance = fasta.sizes[at]
    if table is not None:
        counts = table.iloc[align_ids(names, origin, list(table.index), request.abundance_path)]
        abundance = counts["total"].to_numpy(np.int64)
    return Annotation(abundance, counts, seqs)


def numbered(clusters: list[list[int]], abundance: np.ndarray) -> list[tuple[int, list[int]]]:
    """(centroid, members) per cluster, in cluster-number order."""
    def centroid(members):
        return min(members, key=lambda k: (-abundance[k], k))

    pairs = [(centroid(m), m) for m in clusters]
    return sorted(pairs, key=lambda p: (-abundance[p[0]], p[0]))


def write_tables(prefix: str, clusters, names: list[str], note: Annotation) -> list[str]:
    """membership, OTU table and centroids FASTA (those the inputs allow); returns paths."""
    ranked = numbered(clusters, note.abundance)
    cluster_of = np.empty(len(names), np.int64)
    centroid_of = np.empty(len(names), np.int64)
    for number, (c, members) in enumerate(ranked, start=1):
        cluster_of[members] = number
        centroid_of[members] = c
    membership = pd.DataFrame({"id": names, "cluster": cluster_of,
                               "centroid": [names[c] for c in centroid_of]})
    written = [f"{prefix}.membership.tsv"]
    with atomic_open(written[-1]) as out:
        membership.to_csv(out, sep="\t", index=False, lineterminator="\n")
    if note.counts is not None:
        table = note.counts.groupby(cluster_of).sum()
        table.index.name = "cluster"
        table.insert(0, "centroid", [names[c] for c, _ in ranked])
        written.append(f"{prefix}.otu_table.tsv")
        with atomic_open(written[-1]) as out:
            table.to_csv(out, sep="\t", lineterminator="\n")
        written.append(f"{prefix}.otu_table.biom")
        write_biom(written[-1], table.drop(columns=["centroid", "total"]),
                   list(table["centroid"]))
    if note.seqs is not None:
        written.append(f"{prefix}.centroids.fasta")
        with atomic_open(written[-1]) as out:
            for c, members in ranked:
                out.write(f">{names[c]};size={note.abundance[members].sum()}\n{note.seqs[c]}\n")
    return written
