"""Figures with matplotlib (no display): the one `pyplot()` and `save()` of every figure,
and the report stage's overview figures (lengths, distances, funnel, clusters)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import UserError
from ..formats.atomic import atomic_path

FIGSIZE = (6, 4)  # inches
DPI = 100
LENGTH_BARS = 150  # at most this many bars in the length histogram
DISTANCE_BARS = 60


def pyplot():
    """matplotlib.pyplot (non-interactive), or a UserError when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise UserError("the figures need matplotlib (pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(plt, fig, path, dpi: int = DPI, layout: bool = True, metadata=None) -> None:
    """Write `fig` as a PNG atomically and close it; layout: tight_layout first. metadata
    {"Software": None} leaves matplotlib's version out, so the bytes depend on the image."""
    if layout:
        fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata=metadata)
    plt.close(fig)


def save_timeless(plt, fig, path) -> None:
    """save() without matplotlib's version: reruns of the same inputs write the same bytes."""
    save(plt, fig, path, metadata={"Software": None})


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
    save_timeless(plt, fig, path)


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
    save_timeless(plt, fig, path)


def plot_identity_distances(plt, distance: np.ndarray, dataset: str, path) -> None:
    """Without an edge list (the filter aligned every pair): the kept pairs' 1 - identity."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    top = float(distance.max()) if distance.size and distance.max() > 0 else 0.05
    ax.hist(distance, bins=np.linspace(0, top, DISTANCE_BARS + 1), color="C0")
    ax.set_xlabel("identity distance (1 - identity)")
    ax.set_ylabel("pairs")
    ax.set_title(f"{dataset}: {len(distance)} kept pairs\n(no distance stage: the filter "
                 "aligned every pair)", fontsize=10)
    save_timeless(plt, fig, path)


def plot_funnel(plt, bars, dataset: str, path) -> None:
    labels, counts = [b[0] for b in bars], [b[1] for b in bars]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    ax.bar(labels, counts, color=[f"C{k}" for k in range(len(bars))])
    ax.set_ylim(0.5, max(max(counts), 1) * 5)  # before the log scale: all counts may be 0
    ax.set_yscale("log")
    for x, count in enumerate(counts):
        ax.text(x, max(count, 1), f"{count:,}", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("sequence pairs")
    ax.set_title(f"{dataset}: pairs through the stages", fontsize=10)
    save_timeless(plt, fig, path)


def plot_clusters(plt, reads: np.ndarray, dataset: str, path) -> None:
    fig, ax = plt.subplots(figsize=FIGSIZE)
    ax.plot(np.arange(1, len(reads) + 1), reads, "o-", markersize=3)
    ax.set_yscale("log")
    ax.set_xlabel("cluster rank")
    ax.set_ylabel("cluster size (reads)")
    ax.set_title(f"{dataset}: {len(reads)} clusters, {int(reads.sum())} reads, "
                 f"{int((reads == 1).sum())} of one read", fontsize=10)
    save_timeless(plt, fig, path)
