"""Plots of the PSSE fits (matplotlib): do the shuffled scores look Gumbel?

- histograms.png: for a few pairs, the histogram of the shuffled scores, the fitted
  Gumbel as expected counts per integer score, F(k + 1/2) - F(k - 1/2) times the number
  of shuffles (integer k standing for [k - 1/2, k + 1/2), as in stats/gumbel.py), and the
  real score.
- qq.png: every shuffled score's p-value under its own pair's fit, pooled over all fitted
  pairs, against the uniform distribution (-log10 scale, so the tail that matters shows).
  Scores are integers, so each p-value is drawn uniformly between P(S > k) and P(S >= k)
  (randomised probability integral transform): uniform exactly when the fit is right.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..stats import gumbel
from .figures import pyplot, save

QQ_POINTS = 2000  # quantiles drawn in the QQ plot (log-spaced ranks)
DPI = 120


def examples(table: pd.DataFrame, count: int) -> np.ndarray:
    """Rows of up to `count` fitted pairs, evenly spread from the smallest p-value to the largest."""
    fitted = np.flatnonzero(table["beta"].notna().to_numpy())
    by_p = fitted[np.argsort(table["pvalue"].to_numpy()[fitted], kind="stable")]
    picks = np.linspace(0, len(by_p) - 1, min(count, len(by_p))).round().astype(int)
    return by_p[np.unique(picks)]


def shuffle_pvalues(table: pd.DataFrame, shuffled: np.ndarray, seed: int = 0) -> np.ndarray:
    """Randomised p-values of all shuffled scores of the fitted pairs under their own fits."""
    fitted = table["beta"].notna().to_numpy()
    mu = table["mu"].to_numpy()[fitted, None]
    beta = table["beta"].to_numpy()[fitted, None]
    k = shuffled[fitted].astype(np.float64)
    above, at_least = gumbel.sf(k + 0.5, mu, beta), gumbel.sf(k - 0.5, mu, beta)
    u = np.random.default_rng(seed).random(k.shape)
    return (above + u * (at_least - above)).ravel()


def _short(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def histograms(plt, table: pd.DataFrame, shuffled: np.ndarray, rows: np.ndarray, path) -> None:
    fig, axes = plt.subplots(1, len(rows), figsize=(4 * len(rows), 3.2), squeeze=False)
    for ax, r in zip(axes[0], rows):
        scores = shuffled[r]
        mu, beta, real = table["mu"].iloc[r], table["beta"].iloc[r], table["score"].iloc[r]
        k = np.arange(scores.min(), scores.max() + 1)
        counts = np.bincount(scores - k[0], minlength=len(k))
        ax.bar(k, counts, width=1.0, color="0.75", label="shuffled")
        expected = len(scores) * (gumbel.sf(k - 0.5, mu, beta) - gumbel.sf(k + 0.5, mu, beta))
        ax.plot(k, expected, color="C0", label=f"Gumbel λ={1 / beta:.3g}")
        far = real > k[-1] + (k[-1] - k[0])  # off the scale of the shuffles: point to it
        if far:
            ax.annotate(f"real score {real} →", xy=(1, 0.5), xycoords="axes fraction",
                        ha="right", color="C3")
        else:
            ax.axvline(real, color="C3", label="real score")
        ax.set_title(f"{_short(table['query'].iloc[r])} / {_short(table['target'].iloc[r])}\n"
                     f"log10 p = {table['log10_pvalue'].iloc[r]:.4g}", fontsize=9)
        ax.set_xlabel("score")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("shuffles")
    save(plt, fig, path, DPI)


def qq(plt, p: np.ndarray, pairs: int, path) -> None:
    p = np.sort(p)
    ranks = np.unique(np.geomspace(1, p.size, QQ_POINTS).round().astype(int)) - 1
    expected = (ranks + 0.5) / p.size
    fig, ax = plt.subplots(figsize=(4.2, 4))
    ax.plot(-np.log10(expected), -np.log10(p[ranks]), ".", markersize=3)
    top = -np.log10(expected[0])
    ax.plot([0, top], [0, top], color="0.5", linewidth=0.8)
    ax.set_xlabel("expected -log10 p (uniform)")
    ax.set_ylabel("observed -log10 p of shuffles")
    ax.set_title(f"{p.size} shuffled scores of {pairs} pairs", fontsize=9)
    save(plt, fig, path, DPI)


def placeholder(plt, text: str, path) -> None:
    """A figure that says why there is no plot (a workflow rule still gets its file)."""
    fig, ax = plt.subplots(figsize=(4.2, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    save(plt, fig, path, DPI, layout=False)


def write(directory, table: pd.DataFrame, shuffled: np.ndarray, count: int = 4) -> bool:
    """histograms.png and qq.png in `directory`; False (and placeholders) when no pair has
    a fit, e.g. no pairs at all."""
    plt = pyplot()
    directory = Path(directory)
    rows = examples(table, count)
    paths = [directory / "histograms.png", directory / "qq.png"]
    if not rows.size:
        for path in paths:
            placeholder(plt, f"no pair with a Gumbel fit\n({len(table)} pairs)", path)
        return False
    histograms(plt, table, shuffled, rows, paths[0])
    qq(plt, shuffle_pvalues(table, shuffled), len(np.flatnonzero(table["beta"].notna())),
       paths[1])
    return True
