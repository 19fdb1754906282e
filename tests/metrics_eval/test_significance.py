"""Significance of differences between metrics: the Williams test against a worked example from the literature,
the PERM-BOTH permutation test against scipy.stats.permutation_test, the paired bootstrap and the clusters."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics_eval import significance


def test_williams_test_worked_example():
    """Howell, Statistical Methods for Psychology (6th ed., p. 262), as computed by B. Weaver's Williams (1959)
    SPSS syntax (MRC CBU statistics wiki, FAQ "Will"): r12 = .80, r13 = .72, r23 = .89, n = 26 gives
    t = 1.361 with 23 degrees of freedom, two-sided p = .187."""
    result = significance.williams_test(0.80, 0.72, 0.89, 26)
    assert result.df == 23
    assert round(result.statistic, 3) == 1.361
    assert round(result.pvalue, 3) == 0.187
    one_sided = significance.williams_test(0.80, 0.72, 0.89, 26, alternative="greater")
    assert one_sided.pvalue == pytest.approx(result.pvalue / 2)


def test_williams_test_is_antisymmetric_and_zero_for_equal_correlations():
    a = significance.williams_test(0.45, 0.30, 0.6, 200)
    b = significance.williams_test(0.30, 0.45, 0.6, 200)
    assert a.statistic == pytest.approx(-b.statistic) and a.pvalue == pytest.approx(b.pvalue)
    assert significance.williams_test(0.4, 0.4, 0.5, 50).statistic == 0
    assert significance.williams_test(0.4, 0.4, 0.5, 50).pvalue == pytest.approx(1.0)


def _scipy_perm_both(h, a, b, statistic, n_resamples, rng=None):
    za, zb = scipy_stats.zscore(a), scipy_stats.zscore(b)
    return scipy_stats.permutation_test(
        (za, zb),
        lambda x, y: statistic(h, x) - statistic(h, y),
        permutation_type="samples",
        alternative="greater",
        n_resamples=n_resamples,
        vectorized=False,
        rng=rng,
    )


def test_permutation_test_matches_scipy_exactly_on_small_samples():
    rng = np.random.default_rng(0)
    h = rng.normal(size=11)
    a = h + rng.normal(scale=0.6, size=11)
    b = h + rng.normal(scale=1.5, size=11)
    ours = significance.permutation_test(h, a, b, "pearson", n_resamples=5000)  # 2^11 swaps: exact
    theirs = _scipy_perm_both(h, a, b, lambda x, y: scipy_stats.pearsonr(x, y)[0], np.inf)
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.pvalue == pytest.approx(theirs.pvalue)
    kendall = significance.permutation_test(h, a, b, "kendall_b", n_resamples=5000)
    theirs = _scipy_perm_both(h, a, b, lambda x, y: scipy_stats.kendalltau(x, y)[0], np.inf)
    assert kendall.pvalue == pytest.approx(theirs.pvalue)


def test_grouped_permutation_test_matches_scipy_exactly():
    rng = np.random.default_rng(1)
    groups = np.repeat([0, 1], 5)
    h = rng.normal(size=10)
    a, b = h + rng.normal(size=10), rng.normal(size=10)

    def grouped(hh, mm):
        return np.mean([scipy_stats.spearmanr(hh[groups == g], mm[groups == g])[0] for g in range(2)])

    ours = significance.permutation_test(h, a, b, "spearman", group_codes=groups, n_resamples=10_000)
    theirs = _scipy_perm_both(h, a, b, grouped, np.inf)
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.pvalue == pytest.approx(theirs.pvalue)


def test_randomised_permutation_test_agrees_with_scipy_to_monte_carlo_precision():
    rng = np.random.default_rng(2)
    h = rng.normal(size=60)
    a = h + rng.normal(scale=1.0, size=60)
    b = h + rng.normal(scale=1.4, size=60)
    ours = significance.permutation_test(h, a, b, "pearson", n_resamples=4000, seed=3)
    theirs = _scipy_perm_both(h, a, b, lambda x, y: scipy_stats.pearsonr(x, y)[0], 4000, np.random.default_rng(4))
    assert ours.pvalue == pytest.approx(theirs.pvalue, abs=0.025)
    assert significance.permutation_test(h, a, b, "pearson", n_resamples=4000, seed=3).pvalue == ours.pvalue


def test_paired_bootstrap_pvalue_counts_resamples_where_a_is_not_better():
    a = np.array([0.5, 0.4, 0.6, np.nan, 0.3])
    b = np.array([0.4, 0.45, 0.5, 0.2, 0.3])
    assert significance.paired_bootstrap_pvalue(a, b) == pytest.approx(2 / 4)  # 0.4<=0.45 and 0.3<=0.3


def test_clusters_follow_the_wmt_rule():
    values = {"A": 0.9, "B": 0.8, "C": 0.5, "D": 0.45, "E": np.nan}
    p = {("A", "B"): 0.3, ("A", "C"): 0.01, ("B", "C"): 0.04, ("A", "D"): 0.001, ("B", "D"): 0.02, ("C", "D"): 0.5}
    ranks = significance.significance_clusters(values, lambda x, y: p[(x, y)], alpha=0.05)
    # C is significantly worse than a metric of the top cluster, so it starts cluster 2; D is not significantly
    # worse than C, the first metric of its cluster, so it stays in 2. An undefined correlation gets no rank.
    assert ranks == {"A": 1, "B": 1, "C": 2, "D": 2}
