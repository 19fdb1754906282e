"""The significance matrix against SciPy, clusters and wins against a worked example, replication against
scipy.stats.pearsonr."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assessment import replication, significance


def test_win_matrix_is_scipy_mannwhitneyu_greater_on_caption_z():
    rng = np.random.default_rng(1)
    names = ["A", "B", "C", "D"]
    means = [0.5, 0.3, 0.28, -0.4]
    rows = [(name, float(z)) for name, mean in zip(names, means) for z in rng.normal(mean, 0.6, 150)]
    captions = pd.DataFrame(rows, columns=["system", "z"])
    p = significance.win_matrix(captions, names)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                assert np.isnan(p.loc[a, b])
            else:
                za = captions.loc[captions.system == a, "z"].to_numpy()
                zb = captions.loc[captions.system == b, "z"].to_numpy()
                assert p.loc[a, b] == pytest.approx(stats.mannwhitneyu(za, zb, alternative="greater").pvalue, rel=1e-12)
    assert p.loc["A", "D"] < 0.05 and p.loc["D", "A"] > 0.95


def matrix(names, beats):
    p = pd.DataFrame(0.5, index=names, columns=names)
    for a, b in beats:
        p.loc[a, b], p.loc[b, a] = 0.001, 0.999
    for name in names:
        p.loc[name, name] = np.nan
    return p


def test_clusters_by_hand():
    # A beats everyone; B does not beat C; B and C both beat D.
    # Boundaries: after A (A beats B, C, D), not after B (B does not beat C), after C ({A,B,C} all beat D).
    p = matrix(list("ABCD"), [("A", "B"), ("A", "C"), ("A", "D"), ("B", "D"), ("C", "D")])
    assert significance.clusters(p).tolist() == [1, 2, 2, 3]
    assert significance.wins(p) == [
        ["A", "B", 0.001],
        ["A", "C", 0.001],
        ["A", "D", 0.001],
        ["B", "D", 0.001],
        ["C", "D", 0.001],
    ]


def test_one_missing_win_above_joins_clusters():
    # A does not beat C: no boundary after A even though A beats B, and none after B
    p = matrix(list("ABCD"), [("A", "B"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")])
    assert significance.clusters(p).tolist() == [1, 1, 1, 2]


def test_no_significant_difference_is_one_cluster():
    assert significance.clusters(matrix(list("ABC"), [])).tolist() == [1, 1, 1]
    assert significance.wins(matrix(list("ABC"), [])) == []


def test_pearson_is_scipy_pearsonr():
    rng = np.random.default_rng(2)
    for n in (3, 5, 12, 40):
        x = rng.normal(size=n)
        y = 0.6 * x + rng.normal(size=n)
        r, p = replication.pearson(x, y)
        expected = stats.pearsonr(x, y)
        assert r == pytest.approx(expected.statistic, rel=1e-12)
        assert p == pytest.approx(expected.pvalue, rel=1e-9)


def test_replication_correlates_the_common_systems_raw_and_z():
    a = pd.DataFrame(
        {"system": ["s1", "s2", "s3", "s4", "only-a"], "raw": [70, 60, 55, 40, 99], "z": [0.5, 0.2, 0.1, -0.4, 2.0]}
    )
    b = pd.DataFrame({"system": ["s4", "s3", "s2", "s1"], "raw": [42, 50, 63, 68], "z": [-0.3, -0.05, 0.3, 0.4]})
    result = replication.correlate(a, b)
    assert result["n_systems"] == 4
    assert result["raw"]["r"] == pytest.approx(stats.pearsonr([70, 60, 55, 40], [68, 63, 50, 42]).statistic)
    assert result["z"]["r"] == pytest.approx(stats.pearsonr([0.5, 0.2, 0.1, -0.4], [0.4, 0.3, -0.05, -0.3]).statistic)
    assert result["z"]["p_value"] == pytest.approx(
        stats.pearsonr([0.5, 0.2, 0.1, -0.4], [0.4, 0.3, -0.05, -0.3]).pvalue
    )


def test_too_few_systems_give_nan():
    r, p = replication.pearson([1, 2], [2, 1])
    assert np.isnan(r) and np.isnan(p)
