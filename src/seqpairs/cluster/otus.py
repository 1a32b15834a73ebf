"""The OTU tables of every clustering method (hierarchical ones at --cutoff, merges strictly
below it), with one name per OTU in all of them: its OTU id, the centroid's id, or
PREFIXNUMBER with --relabel PREFIX (vsearch's --relabel):
- PREFIX.membership.tsv: `id`, `cluster`, `otu`, `centroid`, one row per sequence in input
  order.
- PREFIX.otu_table.tsv (needs --abundance): `cluster`, `otu`, `centroid`, one column per
  sample, `total`: summed counts of the cluster's members; the same counts as BIOM 1.0
  JSON in PREFIX.otu_table.biom (interop.py; observation ids: the OTU ids) and as
  mothur's PREFIX.shared (a row per sample; label: the clustering's distance).
- PREFIX.centroids.fasta (needs --fasta): `>OTU` (`>OTU;size=N` with --sizeout, N the
  cluster's total abundance), then the centroid's sequence.
- PREFIX.uc: vsearch's cluster format (an S record per centroid, an H record per other
  member with its identity to the centroid where the method knows it, `*` elsewhere, a C
  record per cluster).
- PREFIX.sensspec: mothur's sens.spec statistics of the OTUs against the close pairs (those
  within the clustering's cutoff: identity >= --id, or SeqDist distance <= --cutoff): tp,
  tn, fp, fn over all pairs of the sequences, sensitivity ... MCC (what OptiClust
  maximises), so that every method can be compared as mothur compares them.
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
from ..formats.interop import write_biom, write_shared
from .inputs import check_unique
from .opticlust import Confusion, confusion


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


def sequence_names(request) -> tuple[list[str], str]:
    """The ids of the sequences a pair-reading method clusters (--fasta's, else the
    abundance table's, in that order) and the file they come from."""
    origin = request.fasta_path or request.abundance_path
    names = request.fasta.ids if request.fasta else list(request.abundance.index)
    if not names:
        raise UserError(f"{origin}: no sequences")
    check_unique(origin, names)
    return names, origin


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


def centroid_identity(clusters: list[list[int]], abundance: np.ndarray, query, target,
                      ident) -> dict[int, float]:
    """Each member's identity (percent) to its cluster's centroid (numbered's choice) where
    the pairs hold that pair, for the .uc."""
    centroid = np.arange(len(abundance))
    for c, members in numbered(clusters, abundance):
        centroid[members] = c
    to_centroid = (centroid[query] == target) | (centroid[target] == query)
    member = np.where(centroid[query] == target, query, target)[to_centroid]
    return dict(zip(member.tolist(), ident[to_centroid].tolist()))


@dataclass(frozen=True)
class Close:
    """The close pairs (indices), those within the clustering's cutoff: what the OTUs are
    measured against in PREFIX.sensspec."""

    i: np.ndarray
    j: np.ndarray


SENSSPEC_COLUMNS = ("label", "cutoff", "numotus", "tp", "tn", "fp", "fn", "sensitivity",
                    "specificity", "ppv", "npv", "fdr", "accuracy", "mcc", "f1score")


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def write_sensspec(path: str, label: str, otus: int, c: Confusion) -> None:
    """mothur's .sensspec: one row of the partition's statistics."""
    total = c.tp + c.tn + c.fp + c.fn
    values = (label, label, otus, c.tp, c.tn, c.fp, c.fn, _ratio(c.tp, c.tp + c.fn),
              _ratio(c.tn, c.tn + c.fp), _ratio(c.tp, c.tp + c.fp), _ratio(c.tn, c.tn + c.fn),
              _ratio(c.fp, c.tp + c.fp), _ratio(c.tp + c.tn, total), c.mcc,
              _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn))
    text = [v if isinstance(v, str) else str(v) if isinstance(v, int) else f"{v:.6f}"
            for v in values]
    with atomic_open(path) as out:
        out.write("\t".join(SENSSPEC_COLUMNS) + "\n" + "\t".join(text) + "\n")


@dataclass(frozen=True)
class Naming:
    """How the tables name and label the OTUs (the request's --relabel, --sizeout) and the
    clustering's distance for mothur's label."""

    relabel: str | None = None
    sizeout: bool = False
    label: str = "userLabel"


def write_tables(prefix: str, clusters, names: list[str], note: Annotation,
                 naming: Naming = Naming(), identity: dict[int, float] | None = None,
                 close: Close | None = None) -> list[str]:
    """membership, OTU table (TSV, BIOM, mothur .shared), centroids FASTA, .uc and, given
    the close pairs, .sensspec (those the inputs allow); returns their paths. identity:
    member -> percent identity to its centroid, where the method knows it."""
    ranked = numbered(clusters, note.abundance)
    otus = [names[c] if naming.relabel is None else f"{naming.relabel}{number}"
            for number, (c, _) in enumerate(ranked, start=1)]
    cluster_of = np.empty(len(names), np.int64)
    centroid_of = np.empty(len(names), np.int64)
    for number, (c, members) in enumerate(ranked, start=1):
        cluster_of[members] = number
        centroid_of[members] = c
    membership = pd.DataFrame({"id": names, "cluster": cluster_of,
                               "otu": [otus[k - 1] for k in cluster_of],
                               "centroid": [names[c] for c in centroid_of]})
    written = [f"{prefix}.membership.tsv"]
    with atomic_open(written[-1]) as out:
        membership.to_csv(out, sep="\t", index=False, lineterminator="\n")
    if note.counts is not None:
        table = note.counts.groupby(cluster_of).sum()
        table.index.name = "cluster"
        table.insert(0, "otu", otus)
        table.insert(1, "centroid", [names[c] for c, _ in ranked])
        written.append(f"{prefix}.otu_table.tsv")
        with atomic_open(written[-1]) as out:
            table.to_csv(out, sep="\t", lineterminator="\n")
        samples = table.drop(columns=["otu", "centroid", "total"])
        written.append(f"{prefix}.otu_table.biom")
        write_biom(written[-1], samples, otus, list(table["centroid"]))
        written.append(f"{prefix}.shared")
        write_shared(written[-1], samples, otus, naming.label)
    if note.seqs is not None:
        written.append(f"{prefix}.centroids.fasta")
        with atomic_open(written[-1]) as out:
            for otu, (c, members) in zip(otus, ranked):
                size = f";size={note.abundance[members].sum()}" if naming.sizeout else ""
                out.write(f">{otu}{size}\n{note.seqs[c]}\n")
    written.append(f"{prefix}.uc")
    write_uc(written[-1], ranked, names, note, identity or {})
    if close is not None:
        written.append(f"{prefix}.sensspec")
        write_sensspec(written[-1], naming.label, len(ranked),
                       confusion(cluster_of, len(names), close.i, close.j))
    return written


def write_uc(path: str, ranked, names: list[str], note: Annotation,
             identity: dict[int, float]) -> None:
    """vsearch's .uc: per cluster (0-based) an S record (centroid: its length) and an H
    record per other member (its length, identity to the centroid or *), then the C
    records (cluster sizes). Lengths are * without the sequences."""
    def length(k):
        return str(len(note.seqs[k])) if note.seqs is not None else "*"

    lines = []
    for number, (c, members) in enumerate(ranked):
        lines.append(f"S\t{number}\t{length(c)}\t*\t*\t*\t*\t*\t{names[c]}\t*\n")
        for k in members:
            if k != c:
                ident = f"{identity[k]:.1f}" if k in identity else "*"
                lines.append(f"H\t{number}\t{length(k)}\t{ident}\t+\t0\t0\t*\t{names[k]}\t"
                             f"{names[c]}\n")
    for number, (c, members) in enumerate(ranked):
        lines.append(f"C\t{number}\t{len(members)}\t*\t*\t*\t*\t*\t{names[c]}\t*\n")
    with atomic_open(path) as out:
        out.writelines(lines)
