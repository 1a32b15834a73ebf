"""Pairwise statistical significance of local alignment scores (PSSE): the psse stage's engine.

Agrawal and Huang's PSSE: for each pair (query, target) the Smith-Waterman score of the
real pair and of `--shuffles` pairs with the target shuffled (same letters, other order)
come from a backend's local_scores (backends/cpu/local.py, backends/gpu/local.py). A Gumbel
distribution fitted to the shuffled scores (gumbel.FITS: maximum likelihood, the method
of moments or the censored right tail, --fit) gives the p-value of the real score.
Output, one row per input pair in the input order:

  query, target  the pair, as in --pairs (the filter's kept.tsv works as is)
  score          the real pair's local alignment score
  m, n           query and target lengths
  mu, beta       the fitted Gumbel location and scale (NaN, like every value that depends
                 on them, when every shuffle scored alike)
  lambda, K      Karlin-Altschul form: lambda = 1/beta, K = exp(lambda mu)/(m n)
  pvalue         1 - exp(-K m n e^(-lambda score)), the fit's survival at the score (for
                 integer scores the mid-p value, uniform under the null: gumbel.py)
  log10_pvalue   its log10, finite where pvalue underflows to 0 (below ~1e-308: related
                 amplicons of some hundred bp get there)
  evalue         pvalue times the number of pairs tested (rows of --pairs)
  qvalue         Benjamini-Hochberg adjusted p-value over all pairs tested
  significant    pvalue <= --alpha

Under MPI (mpiexec -n N seqpairs psse ...) each rank scores the pairs it
pulls from rank 0 by cost m*n (parallel.Executor.pull), and rank 0 gathers the fits in row order and
writes the table, which is the same bytes for any number of ranks and either backend: the
shuffles of a target depend only on --seed and the target's id (its RNG key, shuffle.py),
so a pair's p-value does not depend on the order or grouping of the pairs either.
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from ..progress import Progress
from . import gumbel

log = logging.getLogger("seqpairs.psse")
STEP_PAIRS = 1 << 14  # pairs scored at a time (progress as it goes)

COLUMNS = ["query", "target", "score", "m", "n", "mu", "beta", "lambda", "K", "pvalue",
           "log10_pvalue", "evalue", "qvalue", "significant"]


def by_target(index: np.ndarray, cells: np.ndarray, pull):
    """Work lists for score_and_fit from an executor's `pull`, handing out whole targets:
    each target's pairs (rows of index) are one item, costing their cells, so that a
    target's shuffles are made once for all its pairs in a list (pairs handed out alone,
    largest first, scatter one target's queries over many lists, each list making its
    shuffles again)."""
    order = np.argsort(index[:, 1], kind="stable")
    starts = np.flatnonzero(np.diff(index[order, 1], prepend=-1))  # each target's first
    bounds = np.r_[starts, len(order)]
    costs = np.add.reduceat(cells[order], starts)
    for targets in pull(costs):
        targets = np.asarray(targets, np.int64)
        sizes = bounds[targets + 1] - bounds[targets]
        # each target's run of `order`, one after another
        yield order[np.repeat(bounds[targets] - np.cumsum(sizes) + sizes, sizes)
                    + np.arange(sizes.sum())]


def score_and_fit(backend, scheme, queries, targets, index: np.ndarray, keys: np.ndarray,
                  shuffles: int, seed: int, threads=None, work=None, eta=True, fit="ml",
                  profiles=None, keep_shuffled=True):
    """Real scores, shuffled scores and the Gumbel fit (mu, beta) of the pairs `index`
    (rows: query row into `queries`, target row into `targets`, codes) on `backend`; keys:
    each target's RNG key; profiles: each query's PSSM scores or None. `work`: the pairs to
    score, as lists of rows of index (an executor's share; default: every pair); `fit`:
    gumbel.FITS' name; keep_shuffled=False: the shuffled scores are not returned (no
    columns). Returns (rows, real, shuffled, mu, beta), rows in the order scored.
    Progress counts the cells against all pairs'; eta=False (one of several workers):
    without a time left."""
    m = np.array([len(c) for c in queries], dtype=np.float64)[index[:, 0]]
    n = np.array([len(c) for c in targets], dtype=np.float64)[index[:, 1]]
    cells = m * n * (shuffles + 1)
    progress = Progress(log, "psse", float(cells.sum()), "cells", eta=eta,
                        rate=lambda done, elapsed: f"{done / elapsed / 1e9:.3f} GCUPS")
    rows, real, shuffled, fits = [], [], [], []
    # each step's fits run on the CPU while the backend scores the next step
    with ThreadPoolExecutor(1) as fitter:
        for items in [np.arange(len(index))] if work is None else work:
            items = np.asarray(items, dtype=np.int64)
            # a target's pairs together: its shuffles are made once for all of them
            items = items[np.argsort(index[items, 1], kind="stable")]
            for start in range(0, len(items), STEP_PAIRS):  # steps: progress as it goes
                step = items[start:start + STEP_PAIRS]
                scores = backend.local_scores(scheme, queries, targets, index[step], keys,
                                              shuffles, seed, threads, profiles)
                rows.append(step)
                real.append(scores[0])
                shuffled.append(scores[1] if keep_shuffled else scores[1][:, :0])
                fits.append(fitter.submit(gumbel.FITS[fit], scores[1]))
                progress.update(float(cells[step].sum()))
        waited = time.perf_counter()
        fits = [f.result() for f in fits]
        # the fits' tail beyond the scoring (one fitter thread beside the backend)
        log.debug("psse: fits done %.3f s after the last scores", time.perf_counter() - waited)
    progress.finish()
    if not real:  # no pair for this worker: empty columns of the same shapes
        rows = [np.empty(0, dtype=np.int64)]
        scores = backend.local_scores(scheme, queries, targets, index[rows[0]], keys,
                                      shuffles, seed, threads, profiles)
        real, shuffled = [scores[0]], [scores[1] if keep_shuffled else scores[1][:, :0]]
        fits = [gumbel.FITS[fit](scores[1])]
    mu, beta = (np.concatenate(column) for column in zip(*fits))
    return np.concatenate(rows), np.concatenate(real), np.concatenate(shuffled), mu, beta


def significance(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Add lambda, K, p-, E- and q-values and `significant` to a table of scores and fits."""
    table["lambda"], table["K"] = gumbel.karlin(table["mu"], table["beta"], table["m"],
                                                table["n"])
    p = gumbel.pvalue(table["score"], table["mu"], table["beta"])
    table["pvalue"] = p
    table["log10_pvalue"] = gumbel.log10_pvalue(table["score"], table["mu"], table["beta"])
    table["evalue"] = gumbel.evalue(p, len(table))
    table["qvalue"] = gumbel.qvalues(p)
    table["significant"] = p <= alpha  # False where there is no fit (NaN)
    return table
