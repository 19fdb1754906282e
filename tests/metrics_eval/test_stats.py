"""The numeric core against independent references: SciPy's pearsonr / spearmanr / kendalltau (variants b and c),
counts by enumerating every pair, and small examples counted by hand."""

import itertools

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics_eval import stats


def brute_counts(h, m, epsilon=0.0):
    """(C, D, T_h only, T_m only, T_hm) by looking at every pair - the definition in Deutsch et al. 2023."""
    c = d = th = tm = thm = 0
    for i, j in itertools.combinations(range(len(h)), 2):
        tie_h = h[i] == h[j]
        tie_m = abs(m[i] - m[j]) <= epsilon
        if tie_h and tie_m:
            thm += 1
        elif tie_h:
            th += 1
        elif tie_m:
            tm += 1
        elif (h[i] - h[j]) * (m[i] - m[j]) > 0:
            c += 1
        else:
            d += 1
    return c, d, th, tm, thm


def first_row(counts):
    """(C, D, T_h only, T_m only, T_hm) of the first row of stats.pair_counts_rows, as brute_counts gives them."""
    return counts.con[0], counts.dis[0], counts.ties_human[0], counts.ties_metric[0], counts.ties_both[0]


def samples(seed, n, discrete=True):
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, n).astype(float) if discrete else rng.normal(size=n)
    m = np.round(0.4 * h + rng.normal(size=n), 1)  # rounding makes metric ties too
    return h, m


@pytest.mark.parametrize("seed, n", [(0, 7), (1, 40), (2, 300), (3, 2500)])
def test_correlations_match_scipy(seed, n):
    h, m = samples(seed, n)
    assert stats.pearson_rows(h, m)[0][0] == pytest.approx(scipy_stats.pearsonr(h, m)[0], abs=1e-12)
    assert stats.spearman_rows(h, m)[0][0] == pytest.approx(scipy_stats.spearmanr(h, m)[0], abs=1e-12)
    counts = stats.pair_counts_rows(h, m)
    assert stats.tau_b(counts)[0] == pytest.approx(scipy_stats.kendalltau(h, m, variant="b")[0], abs=1e-12)
    assert stats.tau_c(counts)[0] == pytest.approx(scipy_stats.kendalltau(h, m, variant="c")[0], abs=1e-12)


def test_rows_are_independent_and_missing_values_are_left_out():
    h1, m1 = samples(4, 30)
    h2, m2 = samples(5, 30)
    m2[[3, 9]] = np.nan  # missing metric scores: those items leave row 2
    h = np.vstack([h1, h2])
    m = np.vstack([m1, m2])
    keep = ~np.isnan(m2)
    r, n = stats.pearson_rows(h, m)
    assert list(n) == [30, 28]
    assert r[1] == pytest.approx(scipy_stats.pearsonr(h2[keep], m2[keep])[0], abs=1e-12)
    rho = stats.spearman_rows(h, m)[0]
    assert rho[1] == pytest.approx(scipy_stats.spearmanr(h2[keep], m2[keep])[0], abs=1e-12)
    tau = stats.tau_b(stats.pair_counts_rows(h, m))
    assert tau[0] == pytest.approx(scipy_stats.kendalltau(h1, m1)[0], abs=1e-12)
    assert tau[1] == pytest.approx(scipy_stats.kendalltau(h2[keep], m2[keep])[0], abs=1e-12)


def test_undefined_correlations_are_nan():
    r, _ = stats.pearson_rows([[1.0, 1.0, 1.0], [1.0, 2.0, np.nan]], [[1.0, 2.0, 3.0], [3.0, np.nan, 2.0]])
    assert np.isnan(r).all()  # a constant side; a single item
    assert np.isnan(stats.tau_b(stats.pair_counts_rows([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])))[0]


@pytest.mark.parametrize("epsilon", [0.0, 0.15])
def test_pair_counts_are_those_of_every_pair(epsilon):
    h, m = samples(6, 60)
    counts = stats.pair_counts_rows(h, m, epsilon=epsilon)
    assert first_row(counts) == brute_counts(h, m, epsilon)


def test_sorted_count_of_long_rows_matches_every_pair(monkeypatch):
    h, m = samples(7, 400)
    monkeypatch.setattr(stats, "SORTED_FROM", 50)  # force the O(n log^2 n) path on this row
    counts = stats.pair_counts_rows(h, m)
    assert first_row(counts) == brute_counts(h, m)


@pytest.mark.parametrize("values", [[3, 1, 2], [1, 1, 1], [5, 4, 3, 2, 1], [2, 3, 2, 1, 3, 3, 0]])
def test_strict_inversions(values):
    expected = sum(1 for i, j in itertools.combinations(range(len(values)), 2) if values[i] > values[j])
    assert stats.strict_inversions(np.array(values, dtype=float)) == expected


def test_pairwise_accuracy_counted_by_hand():
    # human 1 1 2 3, metric 0.1 0.1 0.5 0.4. Pairs: (1,2) tied in both -> correct; (1,3) (2,3) concordant;
    # (1,4) (2,4) concordant; (3,4) human 2<3 but metric 0.5>0.4 -> discordant. acc_eq = (4 + 1) / 6.
    h, m = np.array([1.0, 1, 2, 3]), np.array([0.1, 0.1, 0.5, 0.4])
    counts = stats.pair_counts_rows(h, m)
    assert (counts.con[0], counts.dis[0], counts.ties_both[0]) == (4, 1, 1)
    assert stats.accuracy(counts)[0] == pytest.approx(5 / 6)
    # tau-b = (4 - 1) / sqrt((4 + 1 + 0) * (4 + 1 + 0)) = 0.6 (the tie in both is left out of both terms)
    assert stats.tau_b(counts)[0] == pytest.approx(0.6)


def test_tie_calibration_worked_example():
    # human 1 1 2 2, metric 0.10 0.12 0.50 0.90. Without ties: pairs (1,2) and (3,4) are tied by people but not by
    # the metric (wrong), the four cross pairs concordant: acc 4/6. With epsilon = 0.02 pair (1,2) becomes a
    # metric tie (right): 5/6. epsilon = 0.38 (|0.12 - 0.50|) would tie a concordant pair: worse; epsilon 0.40
    # ties (3,4) but also cross pairs (2,3) and (1,3): 4/6. So the best is epsilon 0.02 with 5/6.
    h, m = np.array([1.0, 1, 2, 2]), np.array([0.10, 0.12, 0.50, 0.90])
    epsilon, value = stats.tie_calibration(h, m)
    assert epsilon == pytest.approx(0.02)
    assert value == pytest.approx(5 / 6)
    assert stats.accuracy(stats.pair_counts_rows(h, m, epsilon=epsilon))[0] == pytest.approx(5 / 6)


@pytest.mark.parametrize("prune_from", [0, 10**9])  # with and without sorting only the pairs that can win
def test_tie_calibration_finds_the_best_threshold_by_exhaustive_search(prune_from, monkeypatch):
    monkeypatch.setattr(stats, "PRUNE_FROM", prune_from)
    rng = np.random.default_rng(8)
    h = rng.integers(1, 4, size=(5, 9)).astype(float)
    m = np.round(h + rng.normal(scale=0.7, size=h.shape), 2)
    epsilon, value = stats.tie_calibration(h, m)
    candidates = sorted({0.0} | {abs(a - b) for row in m for a, b in itertools.combinations(row, 2)})
    best = max(np.mean(stats.accuracy(stats.pair_counts_rows(h, m, epsilon=e))) for e in candidates)
    assert value == pytest.approx(best)
    assert np.mean(stats.accuracy(stats.pair_counts_rows(h, m, epsilon=epsilon))) == pytest.approx(best)


def test_tie_calibration_samples_pairs_above_the_limit_deterministically():
    h, m = samples(9, 400)
    first = stats.tie_calibration(h, m, max_pairs=5000, seed=3)
    assert first == stats.tie_calibration(h, m, max_pairs=5000, seed=3)
    exact_epsilon, exact_value = stats.tie_calibration(h, m)
    sampled_value = stats.accuracy(stats.pair_counts_rows(h, m, epsilon=first[0]))[0]
    assert sampled_value == pytest.approx(exact_value, abs=0.02)  # a near-optimal threshold


def test_average_ranks():
    x = np.array([[3.0, 1.0, 3.0, np.nan, 2.0]])
    ranks = stats.ranks_rows(x)[0]
    assert np.isnan(ranks[3])
    assert list(ranks[[0, 1, 2, 4]]) == list(scipy_stats.rankdata([3.0, 1.0, 3.0, 2.0]))


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.2, 0.3, 0.25])
def test_sorted_pair_counts_with_a_tie_threshold_equal_pair_enumeration(epsilon, monkeypatch):
    """Long rows are counted by sorting also at epsilon > 0 (tie calibration's point estimate): the same counts
    as looking at every pair, on data with ties on both sides and epsilons that fall exactly on differences of
    the data (0.3 - 0.1 is not 0.2 in floating point) as well as between them."""
    monkeypatch.setattr(stats, "SORTED_FROM", 0)
    for seed, n in ((0, 2), (1, 9), (2, 120), (3, 301)):
        h, m = samples(seed, n)
        m = m + np.random.default_rng(seed).choice([0.0, 0.1, 0.3], n)
        counts = stats.pair_counts_rows(h, m, epsilon=epsilon)
        assert first_row(counts) == brute_counts(h, m, epsilon)


def test_level_sweep_equals_pair_enumeration():
    rng = np.random.default_rng(7)
    for n, levels in ((1, 1), (2, 2), (6, 1), (40, 3), (250, 5)):
        rh = np.unique(rng.integers(0, levels, n), return_inverse=True)[1].ravel()
        r = rng.integers(0, 8, n)
        tau = r + rng.integers(0, 3, n)
        for resamples in (3, 70):  # below and above the row-by-row prefix sums
            weights = rng.poisson(1.0, (n, resamples)).astype(np.float32)
            got = stats.level_discordant_weight(rh, r, tau, weights)
            expected = [
                sum(
                    float(weights[i, b] * weights[j, b])
                    for i in range(n)
                    for j in range(n)
                    if rh[i] < rh[j] and r[i] >= tau[j]
                )
                for b in range(min(resamples, 4))
            ]
            assert got[:4].tolist() == expected


def test_prefix_sums_and_stable_argsort_equal_numpy():
    rng = np.random.default_rng(3)
    weights = rng.poisson(2.0, (50, 100)).astype(np.float32)
    for w in (weights, weights[:, :5]):
        prefix = stats.prefix_sums(w)
        assert prefix.shape == (w.shape[0] + 1, w.shape[1]) and not prefix[0].any()
        assert np.array_equal(prefix[1:], np.cumsum(w, axis=0))
    for values in (
        rng.normal(size=1000),
        np.round(rng.normal(size=5000), 1),
        np.zeros(7),
        np.array([]),
        np.abs(rng.integers(-3, 4, 3000)).astype(float),
        np.where(rng.random(2000) < 0.1, np.nan, np.round(rng.normal(size=2000), 1)),
    ):
        assert np.array_equal(stats.stable_argsort(values), np.argsort(values, kind="stable"))


@pytest.mark.parametrize("prune_from", [0, 10**9])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_sampled_tie_calibration_is_the_best_threshold_of_its_sample(seed, prune_from, monkeypatch):
    """Above max_pairs the search runs on a seeded sample of pairs: the chosen epsilon is the smallest of those
    maximising the mean over rows of the sample's accuracy, every threshold of the sample tried one by one
    (with the search sorting all pairs or only those below the last threshold that can win)."""
    monkeypatch.setattr(stats, "PRUNE_FROM", prune_from)
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 4, size=(3, 40)).astype(float)
    scale = (0.3, 0.8, 2.0, 0.05)[seed]  # the best threshold small or large
    m = np.round(h + rng.normal(scale=scale, size=h.shape), 1 + seed % 2)
    m[0, :5] = np.nan
    epsilon, value = stats.tie_calibration(h, m, max_pairs=500, seed=seed)
    hj, mj, present = stats.joint(h, m)
    sizes = present.sum(axis=1)
    rate = min(1.0, 500 / float((sizes * (sizes - 1) / 2).sum()))
    draws = np.random.default_rng(seed)  # the same draws, row by row
    rows = []
    for row in range(3):
        idx = np.flatnonzero(present[row])
        a, b = stats._calibration_pairs(len(idx), rate, draws)
        rows.append((hj[row, idx][a] - hj[row, idx][b], mj[row, idx][a] - mj[row, idx][b]))
    candidates = sorted({0.0} | {float(x) for _, dm in rows for x in np.abs(dm)})

    def mean_accuracy(e):
        return np.mean(
            [
                np.mean(((dh == 0) & (np.abs(dm) <= e)) | ((dh != 0) & (np.abs(dm) > e) & (dh * dm > 0)))
                for dh, dm in rows
            ]
        )

    scores = [mean_accuracy(e) for e in candidates]
    best = max(scores)
    assert value == pytest.approx(best, abs=1e-12)
    assert epsilon == candidates[next(i for i, s in enumerate(scores) if s >= best - 1e-12)]


def test_tie_calibration_draws_are_shared_by_metrics_and_fresh_without_a_seed():
    h, m = samples(9, 400)
    first = stats.tie_calibration(h, m, max_pairs=5000, seed=3)
    stats.tie_calibration(h, m[::-1].copy(), max_pairs=5000, seed=3)  # another metric in between
    stats.tie_calibration(h[:300], m[:300], max_pairs=5000, seed=3)  # other sizes: other draws
    assert stats.tie_calibration(h, m, max_pairs=5000, seed=3) == first
    epsilon, value = stats.tie_calibration(h, m, max_pairs=5000, seed=None)
    assert epsilon >= 0 and 0 <= value <= 1
