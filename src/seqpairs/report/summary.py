"""The report stage's engine: one dataset's figures (figures.py) and summary.tsv from the
other stages' files.

- lengths.png: histogram of the unique sequences' lengths, one count per unique sequence
  (not weighted by abundance: these are the sequences the distance stage aligns, and
  bins.tsv counts them the same way), each length bin of bins.tsv shaded from its
  shortest to its longest member.
- distances.png: histogram of the edge list's distances, with max_distance marked. The
  edge list holds the pairs within max_distance plus the candidate pairs beyond it (their
  identity bound reaches candidate_identity); all other pairs are not in it.
- funnel.png: pairs computed (N(N-1)/2, the tiles' pairs) -> candidates (edge list rows)
  -> kept (kept.tsv rows) -> significant (psse.tsv rows with `significant` True, with
  a psse table), log scale, counts on the bars.
- clusters.png: rank-abundance of the clusters, cluster size in reads (the members'
  `;size=` in unique.fasta; with an OTU table its `total` must agree), log scale.
- summary.tsv: columns `item`, `value`; records (ingest report, `all` row), unique
  sequences, the funnel's counts, clusters; with a times table (the workflow's times.tsv:
  `rule`, `seconds`, `edge_list`) the distance stage's time (its edge-list rules) and
  GCUPS (tiles' cells / that time) and the time of every rule; backend and GPUs.

The PNGs are the same bytes on every run of the same inputs (no date or software version
in them); summary.tsv is not, by nature: it holds measured times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..cluster.otus import align_ids
from ..errors import UserError
from ..formats import tables
from ..formats.atomic import atomic_open
from ..formats.distances import check_made_from, read_edges
from ..formats.fasta import read_unique_fasta
from ..pairs import tiling
from .figures import plot_clusters, plot_distances, plot_funnel, plot_lengths, pyplot

TIMES_COLUMNS = ["rule", "seconds", "edge_list"]


def read_tsv(path, columns) -> pd.DataFrame:
    """tables.read_tsv, every field as written (ids such as "NA" or "007" stay ids);
    `numbers` converts the numeric columns."""
    return tables.read_tsv(path, columns, text=True)


def numbers(table: pd.DataFrame, column: str, path, kind=int) -> np.ndarray:
    """The column as int64 (kind int) or float64 values; UserError on anything else."""
    values = pd.to_numeric(table[column], errors="coerce")
    bad = (values.isna() | (values % 1 != 0)) if kind is int else values.isna()
    bad = np.flatnonzero(bad.to_numpy())
    if bad.size:
        raise UserError(f"{path}:{bad[0] + 2}: {column} {table[column].iloc[bad[0]]!r} "
                        f"is not {'an integer' if kind is int else 'a number'}")
    return values.to_numpy(np.int64 if kind is int else np.float64)


def records(path) -> int:
    """Input records of all samples: the ingest report's `all` row."""
    table = read_tsv(path, ["sample", "records"])
    row = np.flatnonzero(table["sample"] == "all")
    if row.size != 1:
        raise UserError(f"{path}: no single row `all` (not a seqpairs ingest report?)")
    return int(numbers(table, "records", path)[row[0]])


def significant(path) -> int:
    """Rows of seqpairs psse's table marked significant."""
    table = read_tsv(path, ["significant"])
    flags = table["significant"].map({"True": True, "False": False})
    bad = np.flatnonzero(flags.isna().to_numpy())
    if bad.size:
        raise UserError(f"{path}:{bad[0] + 2}: significant "
                        f"{table['significant'].iloc[bad[0]]!r} is not True or False")
    return int(flags.sum())


def cluster_sizes(membership_path, otu_table_path, ids: list[str], sizes: np.ndarray,
                  fasta) -> np.ndarray:
    """Reads per cluster (members' abundance), in decreasing order."""
    membership = read_tsv(membership_path, ["id", "cluster"])
    at = align_ids(ids, fasta, membership["id"].tolist(), membership_path)
    cluster = pd.Series(numbers(membership, "cluster", membership_path)[at])
    reads = pd.Series(sizes).groupby(cluster).sum()
    if otu_table_path is not None:
        table = read_tsv(otu_table_path, ["cluster", "total"])
        total = pd.Series(numbers(table, "total", otu_table_path),
                          index=numbers(table, "cluster", otu_table_path))
        if not total.sort_index().equals(reads):
            raise UserError(f"{otu_table_path}: cluster totals differ from {membership_path} "
                            f"with the abundances of {fasta} (files of different runs?)")
    return np.sort(reads.to_numpy())[::-1]


def funnel(pairs: int, candidates: int, kept: int, significant: int | None):
    """(label, count) of each funnel bar, as plotted and as in summary.tsv."""
    bars = [("pairs computed", pairs), ("candidates", candidates), ("kept", kept)]
    return bars + ([("significant", significant)] if significant is not None else [])


def summary(counts: dict, times: tuple[dict[str, float], float] | None, cells: int,
            backend: str, gpus: int) -> pd.DataFrame:
    """The summary table: `item`, `value` (text, so integers print without decimals).

    times: (seconds per rule, seconds of the edge-list rules), or None: no time rows.
    GCUPS is nan when the benchmark says 0 s (Snakemake rounds to hundredths).
    """
    rows = [(item, str(value)) for item, value in counts.items()]
    if times is not None:
        rule_seconds, distance_seconds = times
        gcups = cells / distance_seconds / 1e9 if distance_seconds > 0 else math.nan
        rows += [("distance time (s)", f"{distance_seconds:.2f}"),
                 ("distance cells", str(cells)),
                 ("distance GCUPS", f"{gcups:.4g}")]
        rows += [(f"time {rule} (s)", f"{s:.2f}") for rule, s in rule_seconds.items()]
    rows += [("backend", backend), ("GPUs", str(gpus))]
    return pd.DataFrame(rows, columns=["item", "value"])


@dataclass(frozen=True)
class Inputs:
    """The files of one dataset that the report reads (psse, otu_table, times optional)."""

    ingest_report: str
    unique: str
    bins: str
    tiles: str
    edges: str
    kept: str
    membership: str
    psse: str | None = None
    otu_table: str | None = None
    times: str | None = None


def read_times(path) -> tuple[dict[str, float], float]:
    """Seconds of each rule, and of the rules that made the edge list, from a times table."""
    table = read_tsv(path, TIMES_COLUMNS)
    seconds = numbers(table, "seconds", path, kind=float)
    flags = table["edge_list"].map({"True": True, "False": False})
    bad = np.flatnonzero(flags.isna().to_numpy())
    if bad.size:
        raise UserError(f"{path}:{bad[0] + 2}: edge_list must be True or False")
    return (dict(zip(table["rule"], seconds.tolist())),
            float(seconds[flags.to_numpy(bool)].sum()))


def report(dataset: str, inputs: Inputs, backend: str, gpus: int, out) -> None:
    """Write the figures and summary.tsv of `dataset` into the folder `out`."""
    seqs = read_unique_fasta(inputs.unique)
    pairs_total = seqs.n * (seqs.n - 1) // 2
    # bins and tiles that cover every pair of unique.fasta once (tiling's checks)
    bins = tiling.check_bins(seqs.lengths, read_tsv(inputs.bins, tiling.BIN_COLUMNS),
                             inputs.bins, inputs.unique)
    spans = bins[["min", "max"]].to_numpy()
    tiles = tiling.check_tiles(seqs.lengths, bins, read_tsv(inputs.tiles, tiling.TILE_COLUMNS),
                               inputs.tiles, inputs.unique)
    cells = int(tiles["cells"].sum())
    edges = read_edges(inputs.edges)
    check_made_from(edges, inputs.edges, seqs.ids, seqs.seqs, inputs.unique)
    kept = len(read_tsv(inputs.kept, ["query", "target"]))
    bars = funnel(pairs_total, len(edges), kept,
                  significant(inputs.psse) if inputs.psse else None)
    reads = cluster_sizes(inputs.membership, inputs.otu_table, seqs.ids, seqs.sizes,
                          inputs.unique)
    counts = {"records": records(inputs.ingest_report), "unique sequences": seqs.n,
              **dict(bars), "clusters": len(reads)}
    times = read_times(inputs.times) if inputs.times else None
    table = summary(counts, times, cells, backend, gpus)

    plt = pyplot()
    out = Path(out)
    plot_lengths(plt, seqs.lengths, spans, dataset, out / "lengths.png")
    plot_distances(plt, edges.distance, edges.max_distance, dataset, out / "distances.png")
    plot_funnel(plt, bars, dataset, out / "funnel.png")
    plot_clusters(plt, reads, dataset, out / "clusters.png")
    with atomic_open(out / "summary.tsv") as fh:
        table.to_csv(fh, sep="\t", index=False, lineterminator="\n")
