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

The p-values of high scores are decided in the right tail, so fit_censored fits that tail
only (as HMMER's esl_gumbel_FitCensored; ungapped statistics are fitted that way): the
samples at or below a censoring point c count only as being below c' (c + 1/2 for integer
scores: fit_censored's resolution), each adding log F(c') to the log-likelihood. With r
samples x above c, k = N - r at or below it, w = exp(-x / beta):
  beta = mean(x) - S / W,  mu = -beta log(W / r),
  W = sum(w) + k exp(-c' / beta),  S = sum(x w) + k c' exp(-c' / beta),
which are the equations above with the censored samples replaced by c' (k copies) but the
mean taken over the r observed ones: the same f(beta) with y = (x, or c' where censored) -
mean(x), one root in (0, mean(x) - c'].

Scores are integers, so the continuous fit stands for P(S = k) ~ F(k + 1/2) - F(k - 1/2).
The p-value of a real score s is the fitted survival function at s itself, 1 - F(s), as
ssearch36 and BLAST evaluate theirs: under that model it is the mid-p value P(S > s) +
P(S = s) / 2 to second order, which is uniform when the pair is unrelated. P(S >= s) =
1 - F(s - 1/2) is not: integer scores tie, so it is too large on the whole (on 400 random
DNA pairs its median was 0.61 and 2% fell at or below 0.05; tests/test_psse.py).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROWS_PER_CHUNK = 1024  # bounds the float64 temporaries of fit() (rows x shuffles each)


def _low(y: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    """Each row's least value (with `counts`, among those that occur), as a column."""
    return (y if counts is None else np.where(counts > 0, y, np.inf)).min(axis=1, keepdims=True)


def _newton(y: np.ndarray, start: np.ndarray, tol: float, max_iter: int,
            counts: np.ndarray | None = None) -> np.ndarray:
    """The root beta of f (module doc) for each row of y (samples less the mean of those
    observed; every row with some spread and min y < 0), from the estimates `start` > 0;
    with `counts`, y holds values and counts how often each occurs in the row."""
    low = _low(y, counts)
    lo = np.zeros(len(y))
    hi = -low[:, 0]
    beta = np.minimum(start, hi)
    active = np.arange(len(y))
    for _ in range(max_iter):
        b = beta[active, None]
        w = np.exp(-(y[active] - low[active]) / b)  # scaled by exp(min/b): no overflow
        if counts is not None:
            w *= counts[active]
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


def _in_chunks(samples, solve):
    """(mu, beta) of each row of samples, solve(rows) -> (mu, beta) on ROWS_PER_CHUNK rows at
    a time, the chunks on all cores' threads (NumPy's loops run without the GIL); a row's
    result never depends on the rows beside it, so neither on the threads."""
    x = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    mu, beta = np.full(len(x), np.nan), np.full(len(x), np.nan)

    def one(start):
        rows = slice(start, start + ROWS_PER_CHUNK)
        mu[rows], beta[rows] = solve(x[rows])

    starts = range(0, len(x), ROWS_PER_CHUNK)
    with ThreadPoolExecutor(min(len(starts), os.cpu_count() or 1) or 1) as pool:
        list(pool.map(one, starts))
    return mu, beta


# A row of integer samples whose range is below one of these widths is fitted from its
# histogram over that many values (each Newton step then takes that many exponentials, not
# one a sample); a fixed width a class, so that a row's sums never depend on other rows.
HISTOGRAM_WIDTHS = (64, 256)


def _histograms(rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, counts) [rows, width]: each row's values from its minimum up, and how often
    each occurs in it (integer samples, range below width)."""
    low = rows.min(axis=1, keepdims=True)
    at = (rows - low).astype(np.int64) + width * np.arange(len(rows))[:, None]
    counts = np.bincount(at.ravel(), minlength=len(rows) * width).reshape(len(rows), width)
    return low + np.arange(width), counts.astype(np.float64)


def fit(samples: np.ndarray, tol: float = 1e-13, max_iter: int = 100):
    """ML Gumbel (mu, beta) of each row of `samples` (rows: pairs; columns: shuffles).

    A row whose samples are all equal has no fit: mu and beta are NaN there. Rows of
    integers with a small range (alignment scores) are fitted from their histograms
    (HISTOGRAM_WIDTHS), the same equations summed by value. Each row's result depends on
    that row only (not on the others in the array).
    """
    def solve_rows(x, counts):
        """(mu, beta) of rows of values x occurring counts times (all ones: samples)."""
        n = counts.sum(axis=1)
        mean = (x * counts).sum(axis=1) / n
        y = x - mean[:, None]
        std = np.sqrt((y**2 * counts).sum(axis=1) / n)
        b = _newton(y, std * np.sqrt(6.0) / np.pi, tol, max_iter, counts)  # from moments
        low = _low(y, counts)[:, 0]
        # mu = -b log(mean(exp(-x/b))), with x = mean + low + (y - low) for range
        logmean = np.log((np.exp(-(y - low[:, None]) / b[:, None]) * counts).sum(axis=1) / n)
        return mean + low - b * logmean, b

    integers = np.issubdtype(np.asarray(samples).dtype, np.integer)  # scores: no check

    def solve(chunk):
        mu, beta = np.full(len(chunk), np.nan), np.full(len(chunk), np.nan)
        spread = chunk.max(axis=1) - chunk.min(axis=1)
        whole = True if integers else (chunk == np.round(chunk)).all(axis=1)
        fitted = spread > 0
        for width in HISTOGRAM_WIDTHS:
            rows = np.flatnonzero(fitted & whole & (spread < width))
            fitted[rows] = False
            if len(rows):
                mu[rows], beta[rows] = solve_rows(*_histograms(chunk[rows], width))
        rows = np.flatnonzero(fitted)
        if len(rows):
            mu[rows], beta[rows] = solve_rows(chunk[rows], np.ones_like(chunk[rows]))
        return mu, beta

    return _in_chunks(samples, solve)


def fit_censored(samples: np.ndarray, tail: float = 0.5, resolution: float = 1.0,
                 tol: float = 1e-13, max_iter: int = 100):
    """ML Gumbel (mu, beta) of the right tail of each row of `samples` (module doc).

    The censoring point c of a row is its m-th smallest sample, m = ceil((1 - tail) N)
    (with (1 - tail) N first rounded to 9 decimals, so that float noise in tail cannot move
    it; no interpolation); with m = 0 (tail = 1) nothing is censored and the fit is fit()'s.
    The samples > c are observed, those <= c censored, so with ties at c (integer scores)
    fewer than tail N may be observed. Samples are multiples of `resolution` (scores:
    integers), so a censored one is known to lie below c + resolution / 2, the boundary
    between c and the next value, where the censored samples are put (as the rounded
    Gumbel's P(S <= c) = F(c + 1/2); resolution 0: continuous samples, at c). Without that
    half step beta of integer scores comes out 20% (scale 2) to 60% (scale 0.8) too large. A row with fewer
    than 2 observed samples, or with no spread among them and the censoring point, has no
    fit (NaN). Each row's result depends on that row only.
    """
    if not 0 < tail <= 1:
        raise ValueError(f"tail must be in (0, 1], not {tail}")
    columns = np.atleast_2d(np.asarray(samples)).shape[1]
    m = int(np.ceil(round((1 - tail) * columns, 9)))

    def solve(chunk):
        mu, beta = np.full(len(chunk), np.nan), np.full(len(chunk), np.nan)
        c = np.partition(chunk, m - 1, axis=1)[:, m - 1:m] if m else np.array([[-np.inf]])
        observed = chunk > c
        r = observed.sum(axis=1)
        # a censored sample counts as the censoring point in W and S
        v = np.where(observed, chunk, c + resolution / 2)
        rows = np.flatnonzero((r >= 2) & (v.max(axis=1) > v.min(axis=1)))
        chunk, observed, r, v = chunk[rows], observed[rows], r[rows], v[rows]
        mean = np.where(observed, chunk, 0.0).sum(axis=1, keepdims=True) / r[:, None]
        y = v - mean
        b = _newton(y, chunk.std(axis=1) * np.sqrt(6.0) / np.pi, tol, max_iter)  # whole row
        low = y.min(axis=1)
        # mu = -b log(W / r), with v = mean + low + (y - low) for range
        logw = np.log(np.exp(-(y - low[:, None]) / b[:, None]).sum(axis=1) / r)
        mu[rows] = mean[:, 0] + low - b * logw
        beta[rows] = b
        return mu, beta

    return _in_chunks(samples, solve)


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
FITS = {"ml": fit, "moments": fit_moments, "censored": fit_censored}  # censored: tail 0.5


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
