"""Row-wise versions of SciPy's tests, for thousands of workers at once.

Each function takes 2-D arrays (one row per worker, the same number of observations per row) and returns, for
every row, exactly what the SciPy function gives when called on that row alone with its defaults (the tests check
this row by row). SciPy's own ``axis=`` vectorisation cannot simply be used on all rows: its "auto" method picks
exact, permutation or normal-approximation p-values once for the whole array (from whether *any* row has ties or
zeros), and its permutation path is slow. So rows are grouped by the method SciPy would pick for each alone.

- ``signed_rank``: ``scipy.stats.wilcoxon(x, y, alternative=...)`` (zero_method "wilcox", no continuity
  correction, method "auto": exact null distribution for n <= 50 without ties or zeros; for n <= 13 with ties or
  zeros the exact permutation distribution, enumerated here with one matrix product; otherwise the normal
  approximation with tie correction). One definition added: a row whose differences are all zero gets
  statistic 0 and p = 1 (SciPy gives 1 for n <= 13 and NaN above).
- ``mann_whitney``: ``scipy.stats.mannwhitneyu(x, y, alternative=...)`` (exact for n <= 8 without ties,
  otherwise the normal approximation with tie and continuity corrections).
- ``paired_t``: ``scipy.stats.ttest_rel(x, y, alternative=...)`` (NaN when all differences are equal to zero).
"""

import itertools
import warnings

import numpy as np
from scipy import stats

_PERMUTATION_MAX_N = 13  # SciPy's limit for the exact permutation path of wilcoxon
_EXACT_MAX_N = 50


def _ties_or_zeros(d):
    """Per row: any zero difference, or any tie among the absolute differences."""
    a = np.sort(np.abs(d), axis=1)
    zeros = (a == 0).any(axis=1)
    ties = (np.diff(a, axis=1) == 0).any(axis=1) if d.shape[1] > 1 else np.zeros(len(d), dtype=bool)
    return zeros | ties


def _sign_patterns(n):
    return np.array(list(itertools.product((0.0, 1.0), repeat=n)))


def _permutation_signed_rank(d, alternative, chunk=512):
    """Exact permutation p-values of the signed-rank statistic (every sign pattern equally likely), as
    scipy.stats.permutation_test does for wilcoxon when n <= 13 and there are ties or zeros."""
    n = d.shape[1]
    absd = np.where(d == 0, np.inf, np.abs(d))
    ranks = stats.rankdata(absd, axis=1)
    ranks[d == 0] = 0.0
    observed = (ranks * (d > 0)).sum(axis=1)
    patterns = _sign_patterns(n)  # (2**n, n)
    eps = np.finfo(float).eps * 100
    p = np.empty(len(d))
    for start in range(0, len(d), chunk):
        null = ranks[start : start + chunk] @ patterns.T  # (rows, 2**n)
        obs = observed[start : start + chunk, None]
        gamma = np.abs(eps * obs)
        greater = (null >= obs - gamma).mean(axis=1)
        less = (null <= obs + gamma).mean(axis=1)
        if alternative == "greater":
            p[start : start + chunk] = greater
        elif alternative == "less":
            p[start : start + chunk] = less
        else:
            p[start : start + chunk] = np.minimum(np.minimum(greater, less) * 2, 1.0)
    r_minus = (ranks * (d < 0)).sum(axis=1)
    statistic = np.minimum(observed, r_minus) if alternative == "two-sided" else observed
    return statistic, p


def signed_rank(x, y, alternative="greater"):
    """Wilcoxon signed-rank test of x - y per row; returns (statistic, p_value) arrays."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rows, n = x.shape
    statistic, p = np.zeros(rows), np.ones(rows)
    if rows == 0 or n == 0:
        return statistic, p
    d = x - y
    all_zero = ~(d != 0).any(axis=1)
    flagged = _ties_or_zeros(d)
    groups = {
        "exact": ~all_zero & ~flagged & (n <= _EXACT_MAX_N),
        "permutation": ~all_zero & flagged & (n <= _PERMUTATION_MAX_N),
    }
    groups["asymptotic"] = ~all_zero & ~groups["exact"] & ~groups["permutation"]
    for method, mask in groups.items():
        if not mask.any():
            continue
        if method == "permutation":
            statistic[mask], p[mask] = _permutation_signed_rank(d[mask], alternative)
        else:
            result = stats.wilcoxon(x[mask], y[mask], alternative=alternative, method=method, axis=1)
            statistic[mask], p[mask] = result.statistic, result.pvalue
    return statistic, p


def mann_whitney(x, y, alternative="greater"):
    """Mann-Whitney U test of row x against row y (independent samples); returns (U of x, p_value)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rows = x.shape[0]
    statistic, p = np.full(rows, np.nan), np.full(rows, np.nan)
    if rows == 0 or x.shape[1] == 0 or y.shape[1] == 0:
        return statistic, p
    both = np.sort(np.concatenate([x, y], axis=1), axis=1)
    ties = (np.diff(both, axis=1) == 0).any(axis=1)
    for mask in (ties, ~ties):
        if mask.any():
            result = stats.mannwhitneyu(x[mask], y[mask], alternative=alternative, axis=1)
            statistic[mask], p[mask] = result.statistic, result.pvalue
    return statistic, p


def paired_t(x, y, alternative="greater"):
    """Paired t-test of x against y per row; returns (t, p_value)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape[0] == 0 or x.shape[1] < 2:
        return np.full(x.shape[0], np.nan), np.full(x.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: SciPy warns, t is +-inf or NaN
        result = stats.ttest_rel(x, y, alternative=alternative, axis=1)
    return np.asarray(result.statistic, dtype=float), np.asarray(result.pvalue, dtype=float)


TESTS = {"wilcoxon": signed_rank, "mann_whitney": mann_whitney, "paired_t": paired_t}
