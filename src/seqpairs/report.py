"""`seqpairs report`: the plots and run summary of one dataset, for Snakemake's HTML report.

Reads the outputs of the other stages and writes into the output folder:

- lengths.png: histogram of the unique sequences' lengths, one count per unique sequence
  (not weighted by abundance: these are the sequences the distance stage aligns, and
  bins.tsv counts them the same way), each length bin of bins.tsv shaded from its
  shortest to its longest member.
- distances.png: histogram of the edge list's distances, with max_distance marked. The
  edge list holds the pairs within max_distance plus the candidate pairs beyond it (their
  identity bound reaches candidate_identity); all other pairs are not in it.
- funnel.png: pairs computed (N(N-1)/2, the tiles' pairs) -> candidates (edge list rows)
  -> kept (kept.tsv rows) -> significant (psse.tsv rows with `significant` True, with
  --psse), log scale, counts on the bars.
- clusters.png: rank-abundance of the clusters, cluster size in reads (the members'
  `;size=` in unique.fasta; with --otu-table its `total` must agree), log scale.
- summary.tsv: columns `item`, `value`; records (ingest report, `all` row), unique
  sequences, the funnel's counts, clusters, the distance stage's time and GCUPS (tiles'
  cells / seconds), the time of every rule from its Snakemake benchmark files, backend
  and GPUs.

Benchmarks: a rule's time is the sum over its files BENCHMARKS/RULE/DATASET.tsv and
BENCHMARKS/RULE/DATASET/*.tsv of the mean `s` column (Snakemake writes one row per
repeat). The distance stage is rule `distance`, or with --shards K the K files
distance_shard/DATASET/k-of-K.tsv plus distance_merge/DATASET.tsv (summed: the seconds of
all jobs, not the elapsed time when shards run side by side); benchmarks of the other
layout, left from an earlier run with another shard count, are ignored. The folder
`report` is skipped: the report job's own benchmark is that of an earlier run.

The PNGs are the same bytes on every run of the same inputs (no date or software version
in them); summary.tsv is not, by nature: it holds measured times.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import tables
from .cluster import align_ids
from .distfiles import read_edges
from .errors import UserError
from .outputs import atomic_open, atomic_path
from .sequences import read_unique_fasta

FIGSIZE = (6, 4)  # inches
DPI = 100
LENGTH_BARS = 150  # at most this many bars in the length histogram
DISTANCE_BARS = 60
SELF = "report"  # benchmark folder of this stage's own rule: not read
# Rules in pipeline order for the summary; others follow by name.
RULE_ORDER = ("ingest", "binning", "distance", "distance_shard", "distance_merge",
              "distance_export", "filter", "psse", "cluster")
DISTANCE_RULES = ("distance", "distance_shard", "distance_merge")


# ---------------------------------------------------------------- reading inputs

def read_tsv(path, columns, text=()) -> pd.DataFrame:
    """tables.read_tsv, reading only "NaN" as missing; columns in `text` stay strings
    (ids such as "007" are not numbers)."""
    return tables.read_tsv(path, columns, keep_default_na=False, na_values=["NaN"],
                           dtype=dict.fromkeys(text, str))


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
    table = read_tsv(path, ["sample", "records"], text=["sample"])
    row = np.flatnonzero(table["sample"] == "all")
    if row.size != 1:
        raise UserError(f"{path}: no single row `all` (not a seqpairs ingest report?)")
    return int(numbers(table, "records", path)[row[0]])


def significant(path) -> int:
    """Rows of seqpairs psse's table marked significant."""
    table = read_tsv(path, ["significant"])
    flags = table["significant"].astype(str).map({"True": True, "False": False})
    bad = np.flatnonzero(flags.isna().to_numpy())
    if bad.size:
        raise UserError(f"{path}:{bad[0] + 2}: significant "
                        f"{table['significant'].iloc[bad[0]]!r} is not True or False")
    return int(flags.sum())


def cluster_sizes(membership_path, otu_table_path, ids: list[str], sizes: np.ndarray,
                  fasta) -> np.ndarray:
    """Reads per cluster (members' abundance), in decreasing order."""
    membership = read_tsv(membership_path, ["id", "cluster"], text=["id"])
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


# ---------------------------------------------------------------- benchmarks

def benchmark_seconds(path) -> float:
    """Seconds of one job: the mean `s` of its benchmark rows (one per repeat)."""
    table = read_tsv(path, ["s"])
    if table.empty:
        raise UserError(f"{path}: no benchmark rows")
    return float(numbers(table, "s", path, kind=float).mean())


def distance_files(root: Path, dataset: str, shards: int) -> dict[str, list[Path]]:
    """Benchmark files of the distance stage by rule; UserError when one is missing."""
    if shards == 1:
        files = {"distance": [root / "distance" / f"{dataset}.tsv"]}
    else:
        files = {"distance_shard": [root / "distance_shard" / dataset / f"{k}-of-{shards}.tsv"
                                    for k in range(shards)],
                 "distance_merge": [root / "distance_merge" / f"{dataset}.tsv"]}
    for path in sum(files.values(), []):
        if not path.is_file():
            hint = "" if shards > 1 else " (a sharded dataset? give --shards)"
            raise UserError(f"{path}: no such file: no benchmark of the distance stage{hint}")
    return files


def rule_files(root: Path, dataset: str, shards: int) -> dict[str, list[Path]]:
    """Benchmark files of every rule that ran for the dataset, in pipeline order."""
    if not root.is_dir():
        raise UserError(f"{root}: no such folder (Snakemake's benchmark folder)")
    files = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != SELF):
        own = [folder / f"{dataset}.tsv"] if (folder / f"{dataset}.tsv").is_file() else []
        own += sorted((folder / dataset).glob("*.tsv")) if (folder / dataset).is_dir() else []
        if own and folder.name not in DISTANCE_RULES:
            files[folder.name] = own
    files.update(distance_files(root, dataset, shards))
    order = {rule: k for k, rule in enumerate(RULE_ORDER)}
    return dict(sorted(files.items(), key=lambda item: (order.get(item[0], len(order)),
                                                       item[0])))


# ---------------------------------------------------------------- numbers

def funnel(pairs: int, candidates: int, kept: int, significant: int | None):
    """(label, count) of each funnel bar, as plotted and as in summary.tsv."""
    bars = [("pairs computed", pairs), ("candidates", candidates), ("kept", kept)]
    return bars + ([("significant", significant)] if significant is not None else [])


def summary(counts: dict, stage_seconds: dict[str, float], distance_seconds: float,
            cells: int, backend: str, gpus: int) -> pd.DataFrame:
    """The summary table: `item`, `value` (text, so integers print without decimals).

    GCUPS is nan when the benchmark says 0 s (Snakemake rounds to hundredths).
    """
    gcups = cells / distance_seconds / 1e9 if distance_seconds > 0 else math.nan
    rows = [(item, str(value)) for item, value in counts.items()]
    rows += [("distance time (s)", f"{distance_seconds:.2f}"),
             ("distance cells", str(cells)),
             ("distance GCUPS", f"{gcups:.4g}")]
    rows += [(f"time {rule} (s)", f"{s:.2f}") for rule, s in stage_seconds.items()]
    rows += [("backend", backend), ("GPUs", str(gpus))]
    return pd.DataFrame(rows, columns=["item", "value"])


# ---------------------------------------------------------------- plots

def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(plt, fig, path) -> None:
    fig.tight_layout()
    with atomic_path(path) as tmp:
        # Without the Software entry (matplotlib's version) the bytes depend on the image only.
        fig.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)


def plot_lengths(plt, lengths: np.ndarray, spans: np.ndarray, dataset: str, path) -> None:
    """`spans`: each length bin's shortest and longest member (bins.tsv's min, max)."""
    lo, hi = int(lengths.min()), int(lengths.max())
    step = max(1, math.ceil((hi - lo + 1) / LENGTH_BARS))  # whole bp per bar
    edges = lo - 0.5 + step * np.arange(math.ceil((hi - lo + 1) / step) + 1)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for k, (first, last) in enumerate(spans.tolist()):
        ax.axvspan(first - 0.5, last + 0.5, color="C1" if k % 2 else "C2", alpha=0.15,
                   linewidth=0, label="length bins" if k == 0 else None)
    ax.hist(lengths, bins=edges, color="C0", label="unique sequences")
    ax.set_xlabel("length (bp)" + (f", {step} bp per bar" if step > 1 else ""))
    ax.set_ylabel("unique sequences")
    ax.set_title(f"{dataset}: {len(lengths)} unique sequences, {len(spans)} length bins",
                 fontsize=10)
    ax.legend(fontsize=8)
    save(plt, fig, path)


def plot_distances(plt, distance: np.ndarray, max_distance: float, dataset: str, path) -> None:
    fig, ax = plt.subplots(figsize=FIGSIZE)
    top = max(float(distance.max()) if distance.size else 0.0,
              max_distance if math.isfinite(max_distance) else 0.0) or 1.0
    ax.hist(distance, bins=np.linspace(0, top, DISTANCE_BARS + 1), color="C0")
    if math.isfinite(max_distance):
        ax.axvline(max_distance, color="C3", label=f"max_distance {max_distance:g}")
        ax.legend(fontsize=8)
    ax.set_xlabel("SeqDist distance")
    ax.set_ylabel("pairs")
    ax.set_title(f"{dataset}: {len(distance)} pairs in the edge list\n(pairs beyond "
                 "max_distance that are not candidates are not in it)", fontsize=10)
    save(plt, fig, path)


def plot_funnel(plt, bars, dataset: str, path) -> None:
    labels, counts = [b[0] for b in bars], [b[1] for b in bars]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    ax.bar(labels, counts, color=[f"C{k}" for k in range(len(bars))])
    ax.set_yscale("log")
    ax.set_ylim(0.5, max(max(counts), 1) * 5)
    for x, count in enumerate(counts):
        ax.text(x, max(count, 1), f"{count:,}", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("sequence pairs")
    ax.set_title(f"{dataset}: pairs through the stages", fontsize=10)
    save(plt, fig, path)


def plot_clusters(plt, reads: np.ndarray, dataset: str, path) -> None:
    fig, ax = plt.subplots(figsize=FIGSIZE)
    ax.plot(np.arange(1, len(reads) + 1), reads, "o-", markersize=3)
    ax.set_yscale("log")
    ax.set_xlabel("cluster rank")
    ax.set_ylabel("cluster size (reads)")
    ax.set_title(f"{dataset}: {len(reads)} clusters, {int(reads.sum())} reads, "
                 f"{int((reads == 1).sum())} of one read", fontsize=10)
    save(plt, fig, path)


# ---------------------------------------------------------------- command

def run(args) -> None:
    if args.gpus < 0:
        raise UserError(f"--gpus must be 0 or more, not {args.gpus}")
    if args.shards < 1:
        raise UserError(f"--shards must be 1 or more, not {args.shards}")
    seqs = read_unique_fasta(args.unique)
    pairs_total = seqs.n * (seqs.n - 1) // 2
    bins = read_tsv(args.bins, ["min", "max", "count"])
    binned = numbers(bins, "count", args.bins).sum()
    if binned != seqs.n:
        raise UserError(f"{args.bins}: bins hold {binned} sequences, {args.unique} has "
                        f"{seqs.n} (files of different runs?)")
    spans = np.column_stack([numbers(bins, "min", args.bins), numbers(bins, "max", args.bins)])
    tiles = read_tsv(args.tiles, ["pairs", "cells"])
    tiled = numbers(tiles, "pairs", args.tiles).sum()
    if tiled != pairs_total:
        raise UserError(f"{args.tiles}: tiles hold {tiled} pairs, {seqs.n} sequences have "
                        f"{pairs_total} (files of different runs?)")
    cells = int(numbers(tiles, "cells", args.tiles).sum())
    edges = read_edges(args.edges)
    distance = edges.distance
    if edges.n != seqs.n or not np.array_equal(edges.ids, np.asarray(seqs.ids)):
        raise UserError(f"{args.edges}: made from other sequences than {args.unique}")
    kept = len(read_tsv(args.kept, ["query", "target"]))
    bars = funnel(pairs_total, len(distance), kept,
                  significant(args.psse) if args.psse else None)
    reads = cluster_sizes(args.membership, args.otu_table, seqs.ids, seqs.sizes, args.unique)
    rules = rule_files(Path(args.benchmarks), args.dataset, args.shards)
    seconds = {rule: sum(benchmark_seconds(p) for p in paths) for rule, paths in rules.items()}
    counts = {"records": records(args.ingest_report), "unique sequences": seqs.n,
              **dict(bars), "clusters": len(reads)}
    table = summary(counts, seconds, sum(seconds[r] for r in DISTANCE_RULES if r in seconds),
                    cells, args.distance_backend, args.gpus)

    plt = pyplot()
    out = Path(args.output)
    plot_lengths(plt, seqs.lengths, spans, args.dataset, out / "lengths.png")
    plot_distances(plt, distance, edges.max_distance, args.dataset, out / "distances.png")
    plot_funnel(plt, bars, args.dataset, out / "funnel.png")
    plot_clusters(plt, reads, args.dataset, out / "clusters.png")
    with atomic_open(out / "summary.tsv") as fh:
        table.to_csv(fh, sep="\t", index=False, lineterminator="\n")


def register(sub) -> None:
    p = sub.add_parser("report", help="plots and run summary of one dataset (Snakemake report)")
    p.add_argument("--dataset", required=True, help="dataset name (plot titles, benchmark files)")
    p.add_argument("--ingest-report", required=True, metavar="TSV", help="ingest's report.tsv")
    p.add_argument("--unique", required=True, metavar="FASTA", help="ingest's unique.fasta")
    p.add_argument("--bins", required=True, metavar="TSV", help="binning's bins.tsv")
    p.add_argument("--tiles", required=True, metavar="TSV", help="binning's tiles.tsv")
    p.add_argument("--edges", required=True, metavar="NPZ", help="distance's edges.npz")
    p.add_argument("--kept", required=True, metavar="TSV", help="filter's kept.tsv")
    p.add_argument("--psse", metavar="TSV", help="psse's psse.tsv (adds `significant`)")
    p.add_argument("--membership", required=True, metavar="TSV",
                   help="cluster's PREFIX.membership.tsv")
    p.add_argument("--otu-table", metavar="TSV",
                   help="cluster's PREFIX.otu_table.tsv (checked against the membership)")
    p.add_argument("--benchmarks", required=True, metavar="DIR",
                   help="Snakemake benchmark folder (RULE/DATASET.tsv, RULE/DATASET/*.tsv)")
    p.add_argument("--shards", type=int, default=1,
                   help="the dataset's distance.shards: K > 1 times the distance stage by "
                   "its K shard jobs and the merge (default 1)")
    p.add_argument("--distance-backend", required=True,
                   help="the distance stage's backend, as shown in the summary")
    p.add_argument("--gpus", type=int, required=True, help="GPUs, as shown in the summary")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder")
    p.set_defaults(func=run)
