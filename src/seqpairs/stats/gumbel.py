"""Gumbel (type I extreme value) statistics of local alignment scores, for PSSE.

The shuffled scores of one pair are fitted with a Gumbel distribution by maximum
likelihood, F(x) = exp(-exp(-(x - mu) / beta)). In Karlin-Altschul terms
lambda = 1/beta and K = exp(lambda mu) / (m n), so that
P(S >= s) = 1 - exp(-K m n e^(-lambda s)).

The ML equations (Lawless 1982, sec. 4.1.2; the ones scipy.stats.gumbel_r.fit solves):
  beta = mean(x) - sum(x w) / sum(w),  w = exp(-x / beta)
  mu   = -beta log(mean(exp(-x / beta)))
With y = x - mean(x), the first is f(beta) = beta + sum(y w)/sum(w) = 0, and
f'(beta) = 1 + Var_w(y) / beta^2 > 0: one root, in (0, -min y] (the weighted mean of y
lies between min y and 0). Newton's method from the moment estimate, with bisection
whenever a step leaves the bracket, solves it for many pairs at once.

Scores are integers, so the continuous fit stands for P(S = k) ~ F(k + 1/2) - F(k - 1/2).
The p-value of a real score s is the fitted survival function at s itself, 1 - F(s), as
ssearch36 and BLAST evaluate theirs: under that model it is the mid-p value P(S > s) +
P(S = s) / 2 to second order, which is uniform when the pair is unrelated. P(S >= s) =
1 - F(s - 1/2) is not: integer scores tie, so it is too large on the whole (on 400 random
DNA pairs its median was 0.61 and 2% fell at or below 0.05; tests/test_psse.py).
"""
from __future__ import annotations

import numpy as np

ROWS_PER_CHUNK = 1024  # bounds the float64 temporaries of fit() (rows x shuffles each)


def _newton(y: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """beta of each row of centred samples y (every row with some spread)."""
    low = y.min(axis=1, keepdims=True)
    lo = np.zeros(len(y))
    hi = -low[:, 0]
    beta = np.minimum(y.std(axis=1) * np.sqrt(6.0) / np.pi, hi)  # moment estimate
    active = np.arange(len(y))
    for _ in range(max_iter):
        b = beta[active, None]
        w = np.exp(-(y[active] - low[active]) / b)  # scaled by exp(min/b): no overflow
        sw = w.sum(axis=1)
        mean_w = (y[active] * w).sum(axis=1) / sw
        var_w = (y[active] ** 2 * w).sum(axis=1) / sw - mean_w**2
        b = b[:, 0]
        f = b + mean_w
        lo[active] = np.where(f < 0, b, lo[active])
        hi[active] = np.where(f > 0, b, hi[active])
        new = b - f / (1.0 + np.maximum(var_w, 0.0) / b**2)
        outside = (new <= lo[active]) | (new >= hi[active])
        new = np.where(outside, 0.5 * (lo[active] + hi[active]), new)
        beta[active] = new
        done = (np.abs(new - b) <= tol * b) | (f == 0)
        active = active[~done]
        if not active.size:
            return beta
    raise RuntimeError(f"Gumbel fit: {active.size} rows did not converge in {max_iter} steps")


def fit(samples: np.ndarray, tol: float = 1e-13, max_iter: int = 100):
    """ML Gumbel (mu, beta) of each row of `samples` (rows: pairs; columns: shuffles).

    A row whose samples are all equal has no fit: mu and beta are NaN there. Each row's
    result depends on that row only (not on the others in the array).
    """
    x = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    mu, beta = np.full(len(x), np.nan), np.full(len(x), np.nan)
    for start in range(0, len(x), ROWS_PER_CHUNK):
        rows = np.arange(start, min(start + ROWS_PER_CHUNK, len(x)))
        chunk = x[rows]
        spread = chunk.max(axis=1) > chunk.min(axis=1)
        rows, chunk = rows[spread], chunk[spread]
        mean = chunk.mean(axis=1, keepdims=True)
        y = chunk - mean
        b = _newton(y, tol, max_iter)
        low = y.min(axis=1)
        # mu = -b log(mean(exp(-x/b))), with x = mean + low + (y - low) for range
        logmean = np.log(np.exp(-(y - low[:, None]) / b[:, None]).mean(axis=1))
        mu[rows] = mean[:, 0] + low - b * logmean
        beta[rows] = b
    return mu, beta


def fit_moments(samples):
    """(mu, beta) of each row of `samples` by the method of moments, as SciPy's
    gumbel_r.fit(method="MM"): beta = sqrt(6 var) / pi (var with 1/n), mu = mean - gamma
    beta (gamma: Euler's constant); NaN where a row has no spread."""
    x = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    beta = np.sqrt(6 * x.var(axis=1)) / np.pi
    mu = x.mean(axis=1) - np.euler_gamma * beta
    none = ~(x.max(axis=1, initial=-np.inf) > x.min(axis=1, initial=np.inf))
    mu[none], beta[none] = np.nan, np.nan
    return mu, beta


# psse's --fit: how the shuffled scores' Gumbel is fitted
FITS = {"ml": fit, "moments": fit_moments}


def karlin(mu, beta, m, n):
    """(lambda, K) of a fit for sequence lengths m and n: lambda = 1/beta, K = e^(lambda mu)/(mn)."""
    lam = 1.0 / np.asarray(beta, dtype=np.float64)
    return lam, np.exp(lam * mu) / (np.asarray(m, dtype=np.float64) * n)


def sf(x, mu, beta):
    """P(X > x) of the continuous Gumbel, 1 - exp(-e^(-(x - mu)/beta)), exact for tiny values."""
    with np.errstate(over="ignore"):  # far below mu: e^(...) = inf, P = 1
        return -np.expm1(-np.exp(-(np.asarray(x, dtype=np.float64) - mu) / beta))


def pvalue(score, mu, beta):
    """The p-value of an integer score: the fitted survival function at the score (the
    module doc says why)."""
    return sf(score, mu, beta)


def log10_pvalue(score, mu, beta):
    """log10 of pvalue(score, mu, beta), finite where the p-value itself underflows to 0.

    log P = log(1 - exp(-t)) with t = e^(-z), z = (score - mu)/beta; for z > 30 (t < 1e-13)
    it is log t + log((1 - e^(-t))/t) = -z - t/2 + O(t^2).
    """
    z = (np.asarray(score, dtype=np.float64) - mu) / beta
    with np.errstate(over="ignore", divide="ignore"):  # t = inf is fine; the branch not
        t = np.exp(-z)                                 # taken may meet log(0)
        log_p = np.where(z > 30, -z - t / 2, np.log(-np.expm1(-t)))
    return log_p / np.log(10)


def evalue(p, tested: int):
    """Expected number of pairs, among the `tested` ones, with a p-value this small by chance."""
    return np.asarray(p, dtype=np.float64) * tested


def qvalues(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), capped at 1.

    NaN p-values (pairs without a fit) stay NaN and count as tested, as if p were 1,
    which can only make the other q-values larger.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    ranked = p[order] * p.size / np.arange(1, order.size + 1)
    q[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return q
