"""PSSE: Gumbel fits, p/E/q-values, published lambdas, and `seqpairs psse` end to end."""
import numpy as np
import pytest
from scipy import stats

from seqpairs import gumbel

# --- gumbel.py against SciPy and the formulas -----------------------------------------


@pytest.mark.parametrize("loc, scale, size", [(40.0, 3.7, 1000), (5.0, 0.75, 200), (0.0, 10.0, 30)])
def test_fit_equals_scipy(loc, scale, size):
    rng = np.random.default_rng(int(scale * 100))
    x = stats.gumbel_r.rvs(loc=loc, scale=scale, size=(40, size), random_state=rng)
    for samples in (x, np.round(x)):  # alignment scores are integers
        mu, beta = gumbel.fit(samples)
        ref = np.array([stats.gumbel_r.fit(row) for row in samples])
        np.testing.assert_allclose(mu, ref[:, 0], rtol=1e-10)
        np.testing.assert_allclose(beta, ref[:, 1], rtol=1e-10)


def test_fit_of_a_row_does_not_depend_on_the_others():
    rng = np.random.default_rng(3)
    x = np.round(stats.gumbel_r.rvs(loc=30, scale=3, size=(gumbel.ROWS_PER_CHUNK + 7, 100),
                                    random_state=rng))
    mu, beta = gumbel.fit(x)
    for k in (0, 5, gumbel.ROWS_PER_CHUNK + 3):  # same bits alone as in a batch (MPI splits)
        alone = gumbel.fit(x[k])
        assert (alone[0][0], alone[1][0]) == (mu[k], beta[k])


def test_fit_of_skewed_and_constant_rows():
    mu, beta = gumbel.fit(np.array([[3, 3, 3, 3], [1, 2, 2, 2], [0, 0, 0, 100]]))
    assert np.isnan(mu[0]) and np.isnan(beta[0])  # no spread, no fit
    for k, row in ((1, [1, 2, 2, 2]), (2, [0, 0, 0, 100])):
        np.testing.assert_allclose((mu[k], beta[k]), stats.gumbel_r.fit(row), rtol=1e-10)


def test_pvalue_is_the_karlin_altschul_formula_at_s_minus_half():
    mu, beta, m, n = 38.2, 3.6, 400, 350
    lam, k = gumbel.karlin(mu, beta, m, n)
    assert lam == 1 / beta
    np.testing.assert_allclose(k * m * n, np.exp(mu / beta), rtol=1e-14)
    scores = np.array([0, 20, 38, 39, 60, 120, 400, 2500])
    direct = 1 - np.exp(-k * m * n * np.exp(-lam * (scores - 0.5)))
    p = gumbel.pvalue(scores, mu, beta)
    np.testing.assert_allclose(p[:5], direct[:5], rtol=1e-12)
    np.testing.assert_allclose(p, stats.gumbel_r.sf(scores - 0.5, mu, beta), rtol=1e-12)
    assert 0 < p[-1] < 1e-290  # no cancellation to 0 in the far tail (1 - exp(-t) ~ t)


def test_continuity_correction_is_exact_for_rounded_gumbel_scores():
    # S = round(X), X continuous Gumbel: P(S >= s) = P(X >= s - 1/2) exactly.
    mu, beta = 10.0, 2.0
    s = np.arange(0, 30)
    pmf_sum = [stats.gumbel_r.cdf(np.arange(k, 200) + 0.5, mu, beta).sum()
               - stats.gumbel_r.cdf(np.arange(k, 200) - 0.5, mu, beta).sum() for k in s]
    np.testing.assert_allclose(gumbel.pvalue(s, mu, beta), pmf_sum, rtol=1e-9)


def test_evalue_counts_the_pairs_tested():
    p = np.array([1e-6, 0.01, 0.5])
    np.testing.assert_array_equal(gumbel.evalue(p, 1000), p * 1000)


def test_qvalues_equal_scipy_benjamini_hochberg():
    rng = np.random.default_rng(5)
    p = np.concatenate([rng.random(300), rng.random(50) * 1e-4, [0.2, 0.2, 0.0, 1.0]])
    np.testing.assert_allclose(gumbel.qvalues(p), stats.false_discovery_control(p, method="bh"),
                               rtol=1e-14)
    # Unfitted pairs (NaN) count as tested with p = 1 and keep a NaN q-value.
    with_nan = np.append(p, np.nan)
    q = gumbel.qvalues(with_nan)
    assert np.isnan(q[-1])
    ref = stats.false_discovery_control(np.append(p, 1.0), method="bh")
    np.testing.assert_allclose(q[:-1], ref[:-1], rtol=1e-14)
