"""The censored (right-tail) ML Gumbel fit, gumbel.fit_censored."""
from fractions import Fraction
from math import ceil

import numpy as np
import pytest
from scipy import optimize, stats

from seqpairs.stats import gumbel


def tight_fmin(func, x0, args=(), disp=0):
    """SciPy's default optimizer (Nelder-Mead) run near its limits, for a tight comparison
    (tolerances of 1e-14 only stall it: the likelihood is flat to rounding there)."""
    return optimize.fmin(func, x0, args, xtol=1e-12, ftol=1e-12, disp=disp)


def censoring_point(row, tail):
    """The m-th smallest sample, m = ceil((1 - tail) N), with exact arithmetic on tail."""
    m = ceil((1 - Fraction(str(tail))) * row.size)
    return np.sort(row)[m - 1]


def loglik(row, c, mu, beta, resolution):
    """Log-likelihood of a row left-censored at c: the samples <= c add log F(c + half a
    resolution) each (scores rounded to integers: P(S <= c) = F(c + 1/2))."""
    observed = row[row > c]
    return (stats.gumbel_r.logpdf(observed, mu, beta).sum() + (row.size - observed.size)
            * stats.gumbel_r.logcdf(c + resolution / 2, mu, beta))


@pytest.mark.parametrize("loc, scale, size, tail", [
    (40.0, 3.7, 1000, 0.3), (40.0, 3.7, 1000, 0.5), (5.0, 0.75, 200, 0.5),
    (5.0, 0.75, 200, 0.8), (25.0, 2.0, 500, 0.3), (60.0, 6.0, 700, 0.8),
    (30.0, 3.0, 300, 0.7),  # (1 - 0.7) * 300 = 90.00000000000001 in floats: m must be 90
])
@pytest.mark.parametrize("resolution", [1.0, 0.0])
def test_censored_fit_equals_scipys(loc, scale, size, tail, resolution):
    rng = np.random.default_rng(size + int(10 * tail))
    x = np.round(stats.gumbel_r.rvs(loc=loc, scale=scale, size=(4, size), random_state=rng))
    mu, beta = gumbel.fit_censored(x, tail, resolution)
    for k, row in enumerate(x):
        c = censoring_point(row, tail)
        observed = row[row > c]
        data = stats.CensoredData(uncensored=observed,
                                  left=np.full(size - observed.size, c + resolution / 2))
        ref_mu, ref_beta = stats.gumbel_r.fit(data, optimizer=tight_fmin)
        np.testing.assert_allclose((mu[k], beta[k]), (ref_mu, ref_beta), rtol=2e-7)
        # ours is the root of the likelihood equations: at least SciPy's numerical optimum
        assert (loglik(row, c, mu[k], beta[k], resolution)
                >= loglik(row, c, ref_mu, ref_beta, resolution) - 1e-9)


@pytest.mark.parametrize("tail, m", [(0.7, 3), (0.75, 3), (0.65, 4), (0.8, 2), (0.9, 1)])
def test_censoring_point_is_the_mth_smallest_sample(tail, m):
    # distinct samples, so that the m-th and (m+1)-th smallest differ: (1 - 0.7) * 10 is
    # 3.0000000000000004 and (1 - 0.8) * 10 is 1.9999999999999996 in floats
    row = np.random.default_rng(m).permutation(np.arange(1.0, 11.0) ** 1.5)
    c = np.sort(row)[m - 1]
    data = stats.CensoredData(uncensored=row[row > c], left=np.full(m, c))
    ref = stats.gumbel_r.fit(data, optimizer=tight_fmin)
    np.testing.assert_allclose(np.ravel(gumbel.fit_censored(row, tail, 0)), ref, rtol=2e-7)


def test_tail_one_is_the_uncensored_fit():
    rng = np.random.default_rng(11)
    x = np.round(stats.gumbel_r.rvs(loc=20, scale=2.5, size=(50, 300), random_state=rng))
    x[3] = 7.0  # no spread: no fit either way
    mu, beta = gumbel.fit_censored(x, tail=1.0)
    ref_mu, ref_beta = gumbel.fit(x)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-12)
    np.testing.assert_allclose(beta, ref_beta, rtol=1e-12)
    assert np.isnan(mu[3]) and np.isnan(beta[3])


@pytest.mark.parametrize("tail", [0.3, 0.5])
@pytest.mark.parametrize("resolution", [0.0, 1.0])
def test_censored_fit_recovers_the_parameters(tail, resolution):
    # continuous samples (resolution 0), or rounded to integers, where censoring at c
    # instead of c + 1/2 overstates beta by a fifth
    rng = np.random.default_rng(5)
    scale = 3.0 if resolution == 0 else 2.0
    x = stats.gumbel_r.rvs(loc=30.0, scale=scale, size=(20, 5000), random_state=rng)
    if resolution:
        x = np.round(x)
        assert gumbel.fit_censored(x, tail, 0)[1].mean() / scale > 1.15
    mu, beta = gumbel.fit_censored(x, tail, resolution)
    assert abs(beta.mean() / scale - 1) < 0.03
    assert abs(mu.mean() - 30.0) < 0.1


def test_censored_fit_of_a_row_does_not_depend_on_the_others():
    rng = np.random.default_rng(3)
    x = np.round(stats.gumbel_r.rvs(loc=30, scale=3, size=(gumbel.ROWS_PER_CHUNK + 7, 100),
                                    random_state=rng))
    mu, beta = gumbel.fit_censored(x, 0.4)
    for k in (0, 5, gumbel.ROWS_PER_CHUNK + 3):  # same bits alone as in a batch (MPI splits)
        alone = gumbel.fit_censored(x[k], 0.4)
        assert (alone[0][0], alone[1][0]) == (mu[k], beta[k])
    by_name = gumbel.FITS["censored"](x)  # psse's --fit censored: tail 0.5
    np.testing.assert_array_equal(by_name, gumbel.fit_censored(x, 0.5))


def test_rows_without_a_censored_fit_and_bad_tails():
    x = np.array([[3, 3, 3, 3, 3, 3],   # nothing above c = 3
                  [0, 0, 0, 0, 0, 5],   # one observed sample
                  [0, 0, 0, 1, 1, 1],   # observed all 1, but c = 0 gives spread
                  [1, 2, 3, 4, 5, 6]])
    mu, beta = gumbel.fit_censored(x, 0.5)
    assert np.isnan(mu[:2]).all() and np.isnan(beta[:2]).all()
    assert np.isfinite(mu[2:]).all() and (beta[2:] > 0).all()
    mu, beta = gumbel.fit_censored(x, 1e-12)  # m = N: nothing observed
    assert np.isnan(mu).all() and np.isnan(beta).all()
    for tail in (0.0, -0.5, 1.5, np.nan):
        with pytest.raises(ValueError):
            gumbel.fit_censored(x, tail)
