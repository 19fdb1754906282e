"""Per-worker quality control against SciPy called directly on each worker's pairs, and against examples worked
by hand."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assessment import quality_control, rank_tests

SCIPY = {
    "wilcoxon": lambda x, y, alternative="greater": stats.wilcoxon(x, y, alternative=alternative),
    "mann_whitney": lambda x, y, alternative="greater": stats.mannwhitneyu(x, y, alternative=alternative),
    "paired_t": lambda x, y, alternative="greater": stats.ttest_rel(x, y, alternative=alternative),
}


def scipy_rows(test, x, y, alternative="greater"):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in zip(x, y):
            result = SCIPY[test](a, b, alternative=alternative)
            out.append((float(result.statistic), float(result.pvalue)))
    return np.array(out).reshape(-1, 2)


def awkward_rows(n, seed=0):
    """Integer 0-100 scores with the cases that change SciPy's method: ties, zero differences, constant and
    all-zero differences (few rows for n <= 13: SciPy's permutation path takes up to 0.3 s per row there)."""
    rng = np.random.default_rng(seed + n)
    k = 1 if 11 <= n <= 13 else 4 if n <= 13 else 10  # rows per case
    x = rng.integers(0, 101, (6 * k, n)).astype(float)
    y = rng.integers(0, 101, (6 * k, n)).astype(float)  # rows [0, k): plain random scores
    y[k : 2 * k, :1] = x[k : 2 * k, :1]  # one zero difference
    x[2 * k : 3 * k] = np.round(x[2 * k : 3 * k] / 25) * 25  # many ties
    y[2 * k : 3 * k] = np.round(y[2 * k : 3 * k] / 25) * 25
    x[3 * k : 4 * k] = np.arange(n) * 3 + 10  # distinct positive differences
    y[3 * k : 4 * k] = 0
    x[4 * k : 5 * k] = y[4 * k : 5 * k] + 7  # every difference the same
    y[5 * k :] = x[5 * k :]  # every difference zero
    return x, y


@pytest.mark.parametrize("n", [2, 3, 5, 8, 9, 10, 13, 14, 20, 50, 51])
@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_row_wise_wilcoxon_is_scipy_row_by_row(n, alternative):
    x, y = awkward_rows(n)
    statistic, p = rank_tests.signed_rank(x, y, alternative)
    expected = scipy_rows("wilcoxon", x, y, alternative)
    tested = (x != y).any(axis=1)  # all-zero rows: see the next test
    np.testing.assert_allclose(p[tested], expected[tested, 1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(statistic[tested], expected[tested, 0], rtol=1e-12)


def test_all_zero_differences_get_p_one():
    x = np.full((2, 20), 50.0)
    assert list(rank_tests.signed_rank(x, x)[1]) == [1.0, 1.0]  # SciPy: NaN for n > 13; defined as 1 here
    assert list(rank_tests.signed_rank(x[:, :5], x[:, :5])[1]) == [1.0, 1.0]  # SciPy agrees for n <= 13


@pytest.mark.parametrize("n", [2, 3, 5, 8, 9, 10, 20])
@pytest.mark.parametrize("test", ["mann_whitney", "paired_t"])
def test_row_wise_mann_whitney_and_t_are_scipy_row_by_row(n, test):
    x, y = awkward_rows(n, seed=1)
    statistic, p = rank_tests.TESTS[test](x, y)
    expected = scipy_rows(test, x, y)
    np.testing.assert_allclose(p, expected[:, 1], rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(statistic, expected[:, 0], rtol=1e-12, equal_nan=True)


def judgments(pairs_by_worker, repeats_by_worker=None):
    """A judgments frame: for every worker, (original, degraded) score pairs and (first, repeat) pairs."""
    rows, item = [], 0
    for worker, pairs in pairs_by_worker.items():
        for original, degraded in pairs:
            rows.append((worker, item, original, "original", item + 1))
            rows.append((worker, item + 1, degraded, "degraded", item))
            item += 2
        for first, repeat in (repeats_by_worker or {}).get(worker, []):
            rows.append((worker, item, first, "system", -1))
            rows.append((worker, item + 1, repeat, "repeat", item))
            item += 2
    return pd.DataFrame(rows, columns=["worker", "item", "score", "item_type", "control_of"])


# Hand-worked: differences 5 12 -3 20 8 15 30 -6 25 10; ranks of |d|: 3->1 5->2 6->3 8->4 10->5 12->6 15->7
# 20->8 25->9 30->10; negative ranks 1 + 3 = 4, so T+ = 55 - 4 = 51. Exact null: P(T+ >= 51) = P(T- <= 4) =
# subsets of {1..10} summing to at most 4: {}, {1}, {2}, {3}, {1,2}, {4}, {1,3} = 7 of 2^10 -> p = 7/1024.
HAND_DEGRADED = [60, 50, 73, 40, 52, 45, 30, 76, 35, 50]
HAND_DIFFERENCES = [5, 12, -3, 20, 8, 15, 30, -6, 25, 10]
HAND_PAIRS = [(d + g, g) for d, g in zip(HAND_DIFFERENCES, HAND_DEGRADED)]


def test_hand_worked_wilcoxon_example():
    qc = quality_control.worker_qc(judgments({"w": HAND_PAIRS}), test="wilcoxon", threshold=0.05, min_pairs=10)
    row = qc.iloc[0]
    assert row["n_pairs"] == 10
    assert row["statistic"] == 51
    assert row["p_value"] == pytest.approx(7 / 1024, rel=1e-12)
    assert bool(row["passed"])


def test_hand_worked_paired_t_example():
    # mean d = 116 / 10 = 11.6; sum of squared deviations 1182.4, SD = sqrt(1182.4 / 9); t = 11.6 / (SD / sqrt 10)
    t = 11.6 / (np.sqrt(1182.4 / 9) / np.sqrt(10))
    qc = quality_control.worker_qc(judgments({"w": HAND_PAIRS}), test="paired_t")
    assert qc.iloc[0]["statistic"] == pytest.approx(t, rel=1e-12)
    assert t == pytest.approx(3.2003, abs=1e-4)
    assert qc.iloc[0]["p_value"] == pytest.approx(stats.t.sf(t, 9), rel=1e-12)


def test_hand_worked_mann_whitney_example():
    # originals 80 90 70 vs degraded 10 20 75: U = 3 + 3 + 2 = 8 of 9; exact: U >= 8 in 2 of C(6,3) = 20 orders
    qc = quality_control.worker_qc(judgments({"w": [(80, 10), (90, 20), (70, 75)]}), test="mann_whitney", min_pairs=3)
    assert qc.iloc[0]["statistic"] == 8
    assert qc.iloc[0]["p_value"] == pytest.approx(2 / 20)
    assert not qc.iloc[0]["passed"]


@pytest.mark.parametrize("test", ["wilcoxon", "paired_t", "mann_whitney"])
def test_worker_qc_is_scipy_on_each_workers_pairs(test):
    rng = np.random.default_rng(4)
    pairs = {}
    for w in range(80):
        n = int(rng.choice([1, 2, 3, 5, 8, 10, 15, 20, 29]))  # (SciPy is slow for 11-13 pairs with ties)
        gap = rng.choice([0, 5, 30])
        original = rng.integers(0, 101, n)
        degraded = np.clip(original - gap + rng.integers(-20, 21, n), 0, 100)
        pairs[f"w{w:03d}"] = list(zip(original.tolist(), degraded.tolist()))
    qc = quality_control.worker_qc(judgments(pairs), test=test, threshold=0.05, min_pairs=10).set_index("worker")
    for worker, worker_pairs in pairs.items():
        original, degraded = (np.array(column, dtype=float) for column in zip(*worker_pairs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = SCIPY[test](original, degraded).pvalue
        row = qc.loc[worker]
        assert row["n_pairs"] == len(original)
        if np.isnan(expected):  # a test SciPy cannot compute: defined as no evidence
            assert row["p_value"] == 1.0
        else:
            assert row["p_value"] == pytest.approx(expected, rel=1e-12, abs=1e-300)
        assert bool(row["passed"]) == (len(original) >= 10 and row["p_value"] < 0.05)


def test_min_pairs_and_threshold_decide():
    strong = [(90, 10)] * 3 + [(80 + i, 20) for i in range(6)]  # 9 pairs, p tiny
    qc = quality_control.worker_qc(judgments({"nine": strong, "ten": strong + [(99, 1)]}), min_pairs=10)
    assert qc.set_index("worker")["passed"].to_dict() == {"nine": False, "ten": True}
    qc = quality_control.worker_qc(judgments({"nine": strong}), min_pairs=9, threshold=1e-9)
    assert not qc.iloc[0]["passed"]  # p = 1/512 for 9 positive pairs: not below 1e-9


def test_workers_without_pairs_fail_with_p_one():
    frame = judgments({"a": [(80, 20)] * 12})
    frame = pd.concat([frame, pd.DataFrame([("b", 999, 50, "system", -1)], columns=frame.columns)])
    qc = quality_control.worker_qc(frame).set_index("worker")
    assert qc.loc["b", "n_pairs"] == 0 and qc.loc["b", "p_value"] == 1.0 and not qc.loc["b", "passed"]


def test_repeats_are_tested_for_passing_workers_only():
    pairs = [(90 - i, 20 + i) for i in range(12)]
    consistent = [(60 + i, 60 + i + (1 if i % 2 else -1)) for i in range(10)]
    drifting = [(30 + i, 80 + i) for i in range(10)]
    frame = judgments(
        {"steady": pairs, "drifter": pairs, "failing": [(50, 50)] * 12},
        {"steady": consistent, "drifter": drifting, "failing": drifting},
    )
    qc = quality_control.worker_qc(frame).set_index("worker")
    first, repeat = (np.array(c, dtype=float) for c in zip(*consistent))
    assert qc.loc["steady", "repeats_p_value"] == pytest.approx(stats.wilcoxon(first, repeat).pvalue)
    assert qc.loc["steady", "repeats_p_value"] > 0.05  # its repeats do not differ
    first, repeat = (np.array(c, dtype=float) for c in zip(*drifting))
    assert qc.loc["drifter", "repeats_p_value"] == pytest.approx(stats.wilcoxon(first, repeat).pvalue)
    assert qc.loc["drifter", "repeats_p_value"] < 0.05
    assert qc.loc["steady", "n_repeats"] == 10
    assert np.isnan(qc.loc["failing", "repeats_p_value"])  # failed QC: not reported


def test_pairs_need_the_same_worker():
    frame = judgments({"a": [(90, 10)] * 12})
    frame.loc[frame["item_type"] == "degraded", "worker"] = "b"  # b rated the degraded copies, a the originals
    qc = quality_control.worker_qc(frame).set_index("worker")
    assert qc["n_pairs"].to_dict() == {"a": 0, "b": 0}
