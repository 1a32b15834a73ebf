"""The report stage's engine: one dataset's figures (figures.py) and summary.tsv (and
.html) from the other stages' files.

- lengths.png: histogram of the unique sequences' lengths, one count per unique sequence
  (not weighted by abundance: these are the sequences the distance stage aligns, and
  bins.tsv counts them the same way), each length bin of bins.tsv shaded from its
  shortest to its longest member.
- distances.png: histogram of the edge list's distances, with max_distance marked. The
  edge list holds the pairs within max_distance plus the candidate pairs beyond it (their
  identity bound reaches candidate_identity); all other pairs are not in it. Without an
  edge list (no distance stage ran: the filter's vsearch preset aligned every pair), the
  kept pairs' identity distances (1 - identity), and no candidates in the funnel.
- funnel.png: pairs computed (N(N-1)/2, the tiles' pairs) -> candidates (edge list rows)
  -> kept (kept.tsv rows) -> significant (psse.tsv rows with `significant` True, with
  a psse table), log scale, counts on the bars.
- clusters.png: rank-abundance of the clusters, cluster size in reads (the members'
  `;size=` in unique.fasta; with an OTU table its `total` must agree), log scale.
- summary.tsv: columns `item`, `value`; records (ingest report, `all` row), unique
  sequences, the funnel's counts, clusters; with a times table (the workflow's times.tsv:
  `rule`, `seconds`, `edge_list`) the distance stage's time (its edge-list rules) and
  GCUPS (tiles' cells / that time) and the time of every rule; with the read QC's
  funnel (the workflow's results/qc/D/funnel.tsv) a row per QC step; the backend and
  the GPUs that computed the edge list, read from the distance jobs' logs (each process,
  each MPI rank, logs `<backend> backend: N pairs in T tiles` once, `gpu backend with K
  cpu threads beside it: ...` under --backend hybrid; a GPU rank computes on one GPU).
- summary.html: the same table as an HTML page, one row a line: what Snakemake's HTML
  report shows of the run summary (it shows an HTML result in a frame, a TSV only as a
  download link that displays nothing).

The PNGs are the same bytes on every run of the same inputs (no date or software version
in them); summary.tsv and summary.html are not, by nature: they hold measured times.
"""
from __future__ import annotations

import html
import math
import re
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
from ..scoring.alphabet import DNA
from .figures import (
    plot_clusters,
    plot_distances,
    plot_funnel,
    plot_identity_distances,
    plot_lengths,
    pyplot,
)

TIMES_COLUMNS = ["rule", "seconds", "edge_list"]
FUNNEL_COLUMNS = ["step", "reads", "uniques"]
# a distance process's first line of work (pairs/distance.py), with its rank under MPI
BACKEND_LINE = re.compile(r"^\S+ \S+(?: rank \d+/\d+)? seqpairs\.distance: (\w+) backend"
                          r"(?: with \d+ (\w+) threads beside it)?: \d+ pairs in \d+ tiles$",
                          re.M)


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


def funnel(pairs: int, candidates: int | None, kept: int, significant: int | None):
    """(label, count) of each funnel bar, as plotted and as in summary.tsv; no candidates
    without an edge list (the filter aligned every pair)."""
    bars = [("pairs computed", pairs)]
    bars += [("candidates", candidates)] if candidates is not None else []
    bars += [("kept", kept)]
    return bars + ([("significant", significant)] if significant is not None else [])


def backends_from_logs(paths: list[str]) -> tuple[str, int]:
    """The backends that computed the edge list (`cpu`, `gpu`, or both joined by `+` when
    shards differed, or with the CPU helper of --backend hybrid) and the number of GPU
    processes, from the distance jobs' logs."""
    found, helpers = [], []
    for path in paths:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as exc:
            raise UserError(f"{path}: cannot read ({exc.strerror})") from None
        lines = BACKEND_LINE.findall(text)
        if not lines:
            raise UserError(f"{path}: no line '<backend> backend: N pairs in T tiles' (not the "
                            "log of a seqpairs distance job?)")
        found += [backend for backend, _ in lines]
        helpers += [helper for _, helper in lines if helper]
    return "+".join(sorted({*found, *helpers})), found.count("gpu")


def qc_rows(path) -> list[tuple[str, str]]:
    """Summary rows of the read QC's funnel: reads (and unique sequences) after each step."""
    table = read_tsv(path, FUNNEL_COLUMNS)
    reads = numbers(table, "reads", path)
    rows = []
    for step, count, unique in zip(table["step"], reads, table["uniques"]):
        rows.append((f"QC {step}: reads", str(count)))
        if unique not in ("", "NA"):
            rows.append((f"QC {step}: unique", unique))
    return rows


def summary(counts: dict, times: tuple[dict[str, float], float] | None, cells: int | None,
            backend: str, gpus: int, qc: list[tuple[str, str]] = ()) -> pd.DataFrame:
    """The summary table: `item`, `value` (text, so integers print without decimals).

    times: (seconds per rule, seconds of the edge-list rules), or None: no time rows.
    cells: the distance stage's, or None where it did not run (no distance rows).
    GCUPS is nan when the benchmark says 0 s (Snakemake rounds to hundredths).
    """
    rows = list(qc) + [(item, str(value)) for item, value in counts.items()]
    if times is not None:
        rule_seconds, distance_seconds = times
        if cells is not None:
            gcups = cells / distance_seconds / 1e9 if distance_seconds > 0 else math.nan
            rows += [("distance time (s)", f"{distance_seconds:.2f}"),
                     ("distance cells", str(cells)),
                     ("distance GCUPS", f"{gcups:.4g}")]
        rows += [(f"time {rule} (s)", f"{s:.2f}") for rule, s in rule_seconds.items()]
    rows += [("backend", backend), ("GPUs", str(gpus))]
    return pd.DataFrame(rows, columns=["item", "value"])


def summary_html(dataset: str, table: pd.DataFrame) -> str:
    """The summary table as an HTML page (summary.html), each table row on a line of its
    own; every text escaped."""
    title = html.escape(f"Run summary of dataset {dataset}")
    rows = "".join(f"<tr><td>{html.escape(item)}</td><td>{html.escape(value)}</td></tr>\n"
                   for item, value in zip(table["item"], table["value"]))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{title}</title>\n<style>\n"
            "body { font-family: sans-serif; font-size: 14px; margin: 1em; }\n"
            "table { border-collapse: collapse; }\n"
            "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }\n"
            "td + td { text-align: right; font-variant-numeric: tabular-nums; }\n"
            "</style>\n</head>\n<body>\n"
            f"<h1>{title}</h1>\n<table>\n"
            "<thead><tr><th>item</th><th>value</th></tr></thead>\n<tbody>\n"
            f"{rows}</tbody>\n</table>\n</body>\n</html>\n")


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
    distance_logs: tuple[str, ...] = ()
    qc_funnel: str | None = None
    alphabet: str = DNA  # unique.fasta's letters


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


def report(dataset: str, inputs: Inputs, out) -> None:
    """Write the figures, summary.tsv and summary.html of `dataset` into the folder `out`."""
    seqs = read_unique_fasta(inputs.unique, inputs.alphabet)
    pairs_total = seqs.n * (seqs.n - 1) // 2
    # bins and tiles that cover every pair of unique.fasta once (tiling's checks)
    bins = tiling.check_bins(seqs.lengths, read_tsv(inputs.bins, tiling.BIN_COLUMNS),
                             inputs.bins, inputs.unique)
    spans = np.column_stack((bins["min"], bins["max"]))
    tiles = tiling.check_tiles(seqs.lengths, bins, read_tsv(inputs.tiles, tiling.TILE_COLUMNS),
                               inputs.tiles, inputs.unique)
    cells = int(tiles["cells"].sum())
    edges = read_edges(inputs.edges) if inputs.edges else None
    if edges is not None:
        check_made_from(edges, inputs.edges, seqs.ids, seqs.seqs, inputs.unique)
    kept_pairs = read_tsv(inputs.kept, ["query", "target", "id"])
    bars = funnel(pairs_total, len(edges) if edges is not None else None, len(kept_pairs),
                  significant(inputs.psse) if inputs.psse else None)
    reads = cluster_sizes(inputs.membership, inputs.otu_table, seqs.ids, seqs.sizes,
                          inputs.unique)
    counts = {"records": records(inputs.ingest_report), "unique sequences": seqs.n,
              **dict(bars), "clusters": len(reads)}
    times = read_times(inputs.times) if inputs.times else None
    backend, gpus = (backends_from_logs(inputs.distance_logs) if inputs.distance_logs
                     else ("none (no distance stage)", 0))
    qc = qc_rows(inputs.qc_funnel) if inputs.qc_funnel else []
    table = summary(counts, times, cells if edges is not None else None, backend, gpus, qc)

    plt = pyplot()
    out = Path(out)
    plot_lengths(plt, seqs.lengths, spans, dataset, out / "lengths.png")
    if edges is not None:
        plot_distances(plt, edges.distance, edges.max_distance, dataset, out / "distances.png")
    else:
        plot_identity_distances(plt, 1 - numbers(kept_pairs, "id", inputs.kept, kind=float)
                                / 100, dataset, out / "distances.png")
    plot_funnel(plt, bars, dataset, out / "funnel.png")
    plot_clusters(plt, reads, dataset, out / "clusters.png")
    with atomic_open(out / "summary.tsv") as fh:
        table.to_csv(fh, sep="\t", index=False, lineterminator="\n")
    with atomic_open(out / "summary.html", "wb") as fh:  # ASCII: any locale reads it
        fh.write(summary_html(dataset, table).encode("ascii", "xmlcharrefreplace"))
