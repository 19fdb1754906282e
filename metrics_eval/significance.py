"""Is one metric's correlation with people significantly higher than another's?

- ``williams_test``: Williams (1959) test for two dependent correlations sharing one variable (the human
  scores), in the form given by Steiger (1980) and used for metrics by Graham & Baldwin (2014, EMNLP,
  "Testing for significance of increased correlation with human judgment") and the WMT metrics tasks:
  t(n - 3) = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1)/(n - 3) + ((r12 + r13)/2)^2 (1 - r23)^3),
  K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23, with r12 = r(human, A), r13 = r(human, B), r23 = r(A, B).
  For Pearson correlations only.
- ``permutation_test``: the paired permutation test PERM-BOTH (Deutsch, Dror & Roth 2021, TACL, "A statistical
  analysis of summarization evaluation metrics using resampling methods"; ``PermutationSigDiff`` of
  mt-metrics-eval): both metrics' scores are z-normalised, then each item's two scores are swapped with
  probability 1/2; the p-value is the share of swaps whose difference in correlation is at least the observed one
  (randomised: (count + 1) / (resamples + 1), as scipy.stats.permutation_test; exact when all 2^n swaps are
  fewer than the resamples asked for).
- ``paired_bootstrap_pvalue``: the paired bootstrap test (Koehn 2004, "Statistical significance tests for machine
  translation evaluation"): the share of resamples - the same resampled videos for both metrics - in
  which A does not correlate better than B.
- ``significance_clusters``: WMT metrics-task ranks (Freitag et al. 2022; ``AssignRanks`` in mt-metrics-eval):
  metrics sorted by correlation; a metric starts a new cluster when a metric of the current cluster is
  significantly better than it.
"""

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from . import correlation

ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass
class TestResult:
    statistic: float
    pvalue: float
    df: int | None = None


def williams_test(r12: float, r13: float, r23: float, n: int, alternative: str = "two-sided") -> TestResult:
    """Williams' t for H0: rho12 = rho13 (``greater``: rho12 > rho13), with n - 3 degrees of freedom."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}")
    if n <= 3:
        return TestResult(float("nan"), float("nan"), None)
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(2 * k * (n - 1) / (n - 3) + mean**2 * (1 - r23) ** 3)
    df = int(n - 3)
    if alternative == "greater":
        p = scipy_stats.t.sf(t, df)
    elif alternative == "less":
        p = scipy_stats.t.cdf(t, df)
    else:
        p = 2 * scipy_stats.t.sf(abs(t), df)
    return TestResult(float(t), float(min(p, 1.0)), df)


def _zscore(values: npt.ArrayLike) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    spread = values.std()
    return (values - values.mean()) / (spread if spread > 0 else 1.0)


def _swap_masks(n_items: int, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    if n_items <= 20 and 2**n_items <= n_resamples:
        patterns = np.array(list(itertools.product((False, True), repeat=n_items)), dtype=bool)
        return patterns.reshape(-1, n_items), True
    return np.random.default_rng(seed).random((n_resamples, n_items)) < 0.5, False


def grouped_statistic(
    method: str, group_codes: npt.ArrayLike | None, epsilon: float | None = None
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A statistic over rows of item vectors: the mean over groups (``group_codes`` per item, or None for one
    group) of ``method`` between the human row and each metric row - what segment_correlation computes."""
    if group_codes is None:
        return lambda h, rows: correlation.rowwise(method, np.broadcast_to(h, rows.shape), rows, epsilon)
    codes = np.asarray(group_codes)
    position = np.zeros(len(codes), dtype=int)
    for code in np.unique(codes):
        position[codes == code] = np.arange((codes == code).sum())
    n_groups, width = codes.max() + 1, position.max() + 1

    def statistic(h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        cube_m = np.full((rows.shape[0], n_groups, width), np.nan)
        cube_m[:, codes, position] = rows
        cube_h = np.full((n_groups, width), np.nan)
        cube_h[codes, position] = h
        values = correlation.rowwise(
            method, np.broadcast_to(cube_h, cube_m.shape).reshape(-1, width), cube_m.reshape(-1, width), epsilon
        ).reshape(rows.shape[0], n_groups)
        with np.errstate(invalid="ignore"):
            return np.nanmean(np.where(np.isfinite(values), values, np.nan), axis=1)

    return statistic


def permutation_test(
    h: npt.ArrayLike,
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    method: str = "pearson",
    *,
    group_codes: npt.ArrayLike | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    batch: int = 250,
) -> TestResult:
    """PERM-BOTH p-value for "metric a correlates better with h than metric b" (one-sided), and the observed
    difference. Items are captions (segment level; ``group_codes`` for grouped correlations) or systems."""
    if method == "accuracy_tc":
        raise ValueError("the permutation test is not offered for the tie-calibrated accuracy: use the bootstrap")
    hv, av, bv = (np.asarray(v, dtype=float) for v in (h, a, b))
    keep = ~(np.isnan(hv) | np.isnan(av) | np.isnan(bv))
    if not keep.any():  # no item with all three scores: nothing to compare (an undefined p-value, as for Williams)
        return TestResult(float("nan"), float("nan"))
    hk, za, zb = hv[keep], _zscore(av[keep]), _zscore(bv[keep])
    codes = None if group_codes is None else np.unique(np.asarray(group_codes)[keep], return_inverse=True)[1]
    statistic = grouped_statistic(method, codes)
    observed = float(statistic(hk, za[None, :])[0] - statistic(hk, zb[None, :])[0])
    masks, exact = _swap_masks(len(hk), n_resamples, seed)
    parts = []
    for start in range(0, len(masks), batch):
        swap = masks[start : start + batch]
        first, second = np.where(swap, zb, za), np.where(swap, za, zb)
        parts.append(statistic(hk, first) - statistic(hk, second))
    null = np.concatenate(parts)
    tolerance = 1e-12 * max(1.0, abs(observed))
    hits = int(np.sum(null >= observed - tolerance))
    pvalue = hits / len(null) if exact else (hits + 1) / (len(null) + 1)
    return TestResult(observed, float(pvalue))


def paired_bootstrap_pvalue(samples_a: npt.ArrayLike, samples_b: npt.ArrayLike) -> float:
    """Share of (defined) resamples in which metric a does not correlate better than metric b."""
    a, b = np.asarray(samples_a, dtype=float), np.asarray(samples_b, dtype=float)
    defined = np.isfinite(a) & np.isfinite(b)
    if not defined.any():
        return float("nan")
    return float(np.mean(a[defined] - b[defined] <= 0))


def significance_clusters(
    values: Mapping[str, float], better_pvalue: Callable[[str, str], float], alpha: float = 0.05
) -> dict[str, int]:
    """Ranks (1 = top cluster) of metrics given their correlations ``values`` (dict name -> value) and
    ``better_pvalue(x, y)``, the p-value of "x correlates better than y"."""
    order = sorted((name for name in values if np.isfinite(values[name])), key=lambda name: -values[name])
    ranks, current, start = {}, 1, 0
    for i, name in enumerate(order):
        if any(better_pvalue(order[j], name) <= alpha for j in range(start, i)):
            current += 1
            start = i
        ranks[name] = current
    return ranks
