"""Agreement statistics against independent references: Krippendorff's published worked example, the
``krippendorff`` package on other data, the Wikipedia worked example of Fleiss' kappa, Scott's pi (what Fleiss'
kappa reduces to for two raters), and scipy for the rank correlations."""

import math
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotation_site.factuality import statistics

NAN = float("nan")
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12 units, with
# missing values. Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797; 11 pairable units and
# n = 40 pairable values.
WORKED_EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


@pytest.mark.parametrize("level", PUBLISHED)
def test_alpha_reproduces_krippendorffs_worked_example(level):
    frame = statistics.reliability_frame(WORKED_EXAMPLE)
    result = statistics.krippendorff_alpha(frame, level=level, value_domain=[1, 2, 3, 4, 5])
    assert round(result.alpha, 3) == PUBLISHED[level]
    assert (result.units, result.values, result.annotators) == (11, 40, 4)
    assert any("11 units" in w for w in result.warnings)  # fewer than 30 units: flagged


def test_alpha_unit_and_annotator_labels_do_not_matter():
    frame = statistics.reliability_frame(WORKED_EXAMPLE, units=[f"caption-{i}" for i in range(12)])
    frame["annotator"] = frame["annotator"].map({0: "A", 1: "B", 2: "C", 3: "D"})
    frame = frame.sample(frac=1, random_state=3)  # row order must not matter either
    assert round(statistics.krippendorff_alpha(frame, level="nominal").alpha, 3) == 0.743


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_equals_the_package_on_random_sparse_data(level, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=80)
    matrix = np.array([[min(5, max(1, t + rng.integers(-1, 2))) for t in truth] for _ in range(5)], dtype=float)
    matrix[rng.random(matrix.shape) < 0.35] = np.nan  # annotators judge different subsets
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5])
    result = statistics.krippendorff_alpha(statistics.reliability_frame(matrix), level=level, value_domain=range(1, 6))
    assert result.alpha == pytest.approx(expected, abs=1e-12)
    assert result.units == int((np.sum(~np.isnan(matrix), axis=0) >= 2).sum())


def test_alpha_is_undefined_without_pairs_or_without_variation():
    single = pd.DataFrame({"unit": [1, 2], "annotator": [1, 1], "value": [1, 0]})
    result = statistics.krippendorff_alpha(single)
    assert result.alpha is None and result.units == 0 and "no unit" in result.warnings[0]
    constant = pd.DataFrame({"unit": [1, 1, 2, 2], "annotator": [1, 2, 1, 2], "value": [0, 0, 0, 0]})
    result = statistics.krippendorff_alpha(constant, value_domain=[0, 1])
    assert result.alpha is None and result.units == 2 and "same value" in result.warnings[0]


def test_alpha_refuses_values_outside_the_domain():
    frame = pd.DataFrame({"unit": [1, 1], "annotator": [1, 2], "value": [1, 7]})
    with pytest.raises(ValueError, match="outside the domain"):
        statistics.krippendorff_alpha(frame, level="ordinal", value_domain=range(1, 6))


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example():
    assert round(statistics.fleiss_kappa(FLEISS_WIKIPEDIA), 3) == 0.210


def scotts_pi(a, b):
    """Scott (1955) for two raters: observed agreement against the squared pooled category shares."""
    a, b = list(a), list(b)
    observed = sum(x == y for x, y in zip(a, b)) / len(a)
    pooled = pd.Series(a + b).value_counts(normalize=True)
    expected = float((pooled**2).sum())
    return (observed - expected) / (1 - expected)


def test_fleiss_kappa_for_two_raters_is_scotts_pi():
    rng = np.random.default_rng(7)
    a = rng.integers(1, 6, size=60)
    b = np.where(rng.random(60) < 0.6, a, rng.integers(1, 6, size=60))
    frame = pd.DataFrame({"unit": list(range(60)) * 2, "annotator": [0] * 60 + [1] * 60, "value": list(a) + list(b)})
    result = statistics.fleiss_from_frame(frame, categories=range(1, 6))
    assert result.kappa == pytest.approx(scotts_pi(a, b), abs=1e-12)
    assert (result.units, result.raters, result.dropped) == (60, 2, 0)


def test_fleiss_from_frame_uses_units_with_the_usual_number_of_ratings():
    rows = [
        (u, r, v)
        for u, values in enumerate(FLEISS_WIKIPEDIA)
        for v, count in enumerate(values, 1)
        for r in range(count)
    ]
    frame = pd.DataFrame(rows, columns=["unit", "annotator", "value"])
    extra = pd.DataFrame([(99, 0, 1), (99, 1, 2)], columns=["unit", "annotator", "value"])  # 2 ratings only
    result = statistics.fleiss_from_frame(pd.concat([frame, extra]), categories=range(1, 6))
    assert round(result.kappa, 3) == 0.210 and (result.units, result.raters, result.dropped) == (10, 14, 1)


def test_fleiss_kappa_checks_its_table():
    with pytest.raises(ValueError):
        statistics.fleiss_kappa([[1, 1], [2, 1]])
    assert statistics.fleiss_kappa([[3, 0], [3, 0]]) is None


def test_pairwise_correlation_is_the_mean_of_scipys_per_pair_values():
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, size=25)
    rows = []
    for annotator in range(4):
        for unit, t in enumerate(truth):
            if rng.random() < 0.85:
                rows.append((unit, annotator, int(min(5, max(1, t + rng.integers(-1, 2))))))
    frame = pd.DataFrame(rows, columns=["unit", "annotator", "value"])
    taus, rhos = [], []
    table = {a: dict(zip(g["unit"], g["value"])) for a, g in frame.groupby("annotator")}
    for a, b in combinations(sorted(table), 2):
        common = sorted(set(table[a]) & set(table[b]))
        x, y = [table[a][u] for u in common], [table[b][u] for u in common]
        taus.append(stats.kendalltau(x, y).statistic)
        rhos.append(stats.spearmanr(x, y).statistic)
    result = statistics.pairwise_correlation(frame)
    assert result.pairs == 6
    assert result.kendall_tau == pytest.approx(np.mean(taus), abs=1e-12)
    assert result.spearman_rho == pytest.approx(np.mean(rhos), abs=1e-12)
    tau_c = statistics.pairwise_correlation(frame, kendall_variant="c")
    assert not math.isclose(tau_c.kendall_tau, result.kendall_tau)


def test_pairwise_correlation_skips_pairs_without_variation_or_overlap():
    frame = pd.DataFrame(
        {"unit": [1, 2, 3, 1, 2, 3, 7, 8], "annotator": [1, 1, 1, 2, 2, 2, 3, 3], "value": [3, 3, 3, 1, 2, 3, 1, 2]}
    )
    result = statistics.pairwise_correlation(frame)
    assert result.pairs == 0 and result.kendall_tau is None and result.spearman_rho is None
