"""The vectorised bootstrap against the statistic of each resample built explicitly (videos repeated as drawn)
and computed by SciPy; percentile intervals against scipy.stats.bootstrap; determinism by seed."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from metrics_eval import bootstrap, correlation

# groups whose scores are constant have no correlation (SciPy warns; the engine leaves them out)
pytestmark = pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")


def frame_with_uneven_videos(seed=0):
    """Videos with 1 to 4 captions (systems missing on some videos), Likert human scores with ties."""
    rng = np.random.default_rng(seed)
    rows = []
    for v in range(18):
        for s in rng.choice(["S0", "S1", "S2", "S3"], size=rng.integers(1, 5), replace=False):
            quality = rng.normal()
            rows.append(
                (
                    f"v{v:02d}",
                    s,
                    float(np.clip(np.round(3 + quality + rng.normal(scale=0.6)), 1, 5)),
                    float(np.round(quality + rng.normal(), 1)),
                )
            )
    return pd.DataFrame(rows, columns=["video_id", "system", "human", "metric"])


def expanded(frame, videos, counts_row):
    """The resample itself: every caption of a drawn video, as many times as the video was drawn, with an id."""
    parts = []
    for video, count in zip(videos, counts_row):
        block = frame[frame["video_id"] == video]
        for _ in range(int(count)):
            parts.append(block.assign(caption=block.index))
    return pd.concat(parts)


def distinct_pair_accuracy(sample, epsilon=0.0):
    h, m, ids = sample["human"].to_numpy(), sample["metric"].to_numpy(), sample["caption"].to_numpy()
    good = total = 0
    for i, j in itertools.combinations(range(len(h)), 2):
        if ids[i] == ids[j]:
            continue  # a caption paired with its own copy is not a pair
        total += 1
        tie_h, tie_m = h[i] == h[j], abs(m[i] - m[j]) <= epsilon
        good += (tie_h and tie_m) or (not tie_h and not tie_m and (h[i] - h[j]) * (m[i] - m[j]) > 0)
    return good / total


def reference(method, sample, epsilon=0.0):
    h, m = sample["human"].to_numpy(), sample["metric"].to_numpy()
    if method == "pearson":
        return scipy_stats.pearsonr(h, m)[0]
    if method == "spearman":
        return scipy_stats.spearmanr(h, m)[0]
    if method == "kendall_b":
        return scipy_stats.kendalltau(h, m, variant="b")[0]
    if method == "kendall_c":
        return scipy_stats.kendalltau(h, m, variant="c")[0]
    return distinct_pair_accuracy(sample, epsilon)


METHODS = ["pearson", "spearman", "kendall_b", "kendall_c", "accuracy", "accuracy_tc"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("group_by", ["none", "system"])
def test_each_resample_equals_the_statistic_of_the_expanded_sample(method, group_by):
    frame = frame_with_uneven_videos(1)
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 6, seed=11)
    epsilon = 0.25 if method == "accuracy_tc" else None
    values = bootstrap.bootstrap_segment(frame, "human", "metric", method, group_by, counts, videos, epsilon=epsilon)
    for row, value in zip(counts, values):
        sample = expanded(frame, videos, row)
        groups = [sample] if group_by == "none" else [g for _, g in sample.groupby("system")]
        expected = [reference(method, g, epsilon or 0.0) for g in groups if len(g) > 1]
        expected = [e for e in expected if np.isfinite(e)]
        assert value == pytest.approx(np.mean(expected), abs=1e-9)


@pytest.mark.parametrize("method", METHODS[:5])
def test_grouped_by_video_resamples_weight_each_video_by_its_draws(method):
    frame = frame_with_uneven_videos(2)
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 5, seed=3)
    values = bootstrap.bootstrap_segment(frame, "human", "metric", method, "video", counts, videos)
    per_video = {v: reference(method, g.assign(caption=g.index)) for v, g in frame.groupby("video_id") if len(g) > 1}
    per_video = {v: x for v, x in per_video.items() if np.isfinite(x)}
    for row, value in zip(counts, values):
        drawn = [(per_video[v], c) for v, c in zip(videos, row) if c and v in per_video]
        assert value == pytest.approx(sum(x * c for x, c in drawn) / sum(c for _, c in drawn), abs=1e-12)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "accuracy"])
def test_system_level_resamples_use_the_systems_means_over_drawn_videos(method):
    frame = frame_with_uneven_videos(3)
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 5, seed=4)
    values = bootstrap.bootstrap_system(frame, "human", "metric", method, counts, videos)
    for row, value in zip(counts, values):
        means = expanded(frame, videos, row).groupby("system")[["human", "metric"]].mean()
        if method == "accuracy":
            expected = distinct_pair_accuracy(means.assign(caption=range(len(means))))
        else:
            expected = reference(method, means)
        assert value == pytest.approx(expected, abs=1e-12)


def test_video_resamples_are_draws_of_all_videos_and_repeat_with_the_seed():
    counts = bootstrap.video_resamples(40, 200, seed=5)
    assert counts.shape == (200, 40) and (counts.sum(axis=1) == 40).all()
    assert (counts == bootstrap.video_resamples(40, 200, seed=5)).all()
    assert not (counts == bootstrap.video_resamples(40, 200, seed=6)).all()


@pytest.mark.parametrize("method", ["pearson", "kendall_b", "accuracy"])
def test_interval_contains_the_estimate_and_is_deterministic(method):
    frame = frame_with_uneven_videos(4)
    videos = sorted(frame["video_id"].unique())
    estimate = correlation.segment_correlation(frame, "human", "metric", method).value
    intervals = []
    for _ in range(2):
        counts = bootstrap.video_resamples(len(videos), 1000, seed=0)
        samples = bootstrap.bootstrap_segment(frame, "human", "metric", method, "none", counts, videos)
        intervals.append(bootstrap.percentile_interval(samples, 0.95))
    low, high = intervals[0]
    assert intervals[0] == intervals[1]
    assert low < estimate < high


def test_percentile_interval_agrees_with_scipy_bootstrap():
    """One caption per video: resampling videos is resampling (human, metric) pairs, which scipy.stats.bootstrap
    does with paired=True. Different random streams, so the bounds agree to Monte Carlo precision."""
    rng = np.random.default_rng(6)
    n = 150
    h = rng.normal(size=n)
    m = 0.5 * h + rng.normal(size=n)
    frame = pd.DataFrame({"video_id": [f"v{i:03d}" for i in range(n)], "system": "S", "human": h, "metric": m})
    videos = sorted(frame["video_id"])
    counts = bootstrap.video_resamples(n, 8000, seed=1)
    ours = bootstrap.percentile_interval(
        bootstrap.bootstrap_segment(frame, "human", "metric", "pearson", "none", counts, videos), 0.95
    )
    theirs = scipy_stats.bootstrap(
        (h, m),
        lambda x, y: scipy_stats.pearsonr(x, y)[0],
        paired=True,
        vectorized=False,
        n_resamples=8000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.02)
    assert ours[1] == pytest.approx(theirs.high, abs=0.02)


@pytest.mark.parametrize("group_by", ["none", "system", "video"])
@pytest.mark.parametrize("method", ["spearman", "kendall_b", "kendall_c", "accuracy", "accuracy_tc"])
def test_many_metrics_at_once_give_the_same_values_as_one_at_a_time(method, group_by):
    """Spearman shares the human ranks, the pair methods each group's human side (ties, weights, classes)."""
    frame = frame_with_uneven_videos(5)
    rng = np.random.default_rng(0)
    frame["other"] = frame["metric"] + rng.normal(size=len(frame))
    frame.loc[frame.index[:3], "other"] = np.nan  # a metric covering fewer captions
    frame["third"] = np.round(rng.normal(size=len(frame)), 1)  # the same captions as "metric", many ties
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 50, seed=8)
    names = ["metric", "other", "third"]
    many = bootstrap.bootstrap_segment_many(frame, "human", names, method, group_by, counts, videos)
    for name in names:
        one = bootstrap.bootstrap_segment(frame, "human", name, method, group_by, counts, videos)
        np.testing.assert_allclose(many[name], one, atol=1e-12)


def direct_pair_counts(h, m, w, epsilon):
    """(cd, tm, thm) of the weighted sample by the definition, enumerating every pair of distinct captions
    (a caption of weight w stands for w copies; copies of one caption are not pairs)."""
    cd = tm = thm = 0.0
    for i, j in itertools.combinations(range(len(h)), 2):
        weight = w[i] * w[j]
        tied_m = abs(m[i] - m[j]) <= epsilon
        tm += weight * tied_m
        thm += weight * (tied_m and h[i] == h[j])
        if not tied_m:
            cd += weight * np.sign(h[i] - h[j]) * np.sign(m[i] - m[j])
    return cd, tm, thm


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_tie_calibrated_pair_counts_equal_the_definition(seed):
    """The O(n) window counts of metric ties within epsilon and the threshold-based concordance equal pair
    enumeration on random data with many ties, at epsilons that fall exactly on differences of the data (the
    float boundary cases: 0.3 - 0.1 is not 0.2) as well as between them; and tau-b / accuracy from them equal
    SciPy / the definition on the expanded resample."""
    rng = np.random.default_rng(seed)
    n, k = 60, 25
    vid = np.sort(rng.integers(0, k, n))
    h = rng.integers(1, 4, n).astype(float)
    m = np.round(rng.normal(size=n), 1) + rng.choice([0.0, 0.3, 0.7], n)
    counts = bootstrap.video_resamples(k, 4, seed=seed).astype(float)
    rh = bootstrap.dense_ranks(h)
    layout = bootstrap._Layout(vid)
    c = counts[:, layout.videos]
    for epsilon in (0.1, 0.2, 0.3, 0.25, abs(m[3] - m[7]), 1.0):
        up, low = bootstrap.margin_thresholds(np.unique(m), epsilon)
        values = np.unique(m)
        for a in range(len(values)):
            assert all((values[u] - values[a] > epsilon) == (u >= up[a]) for u in range(a, len(values)))
            assert all((values[a] - values[u] <= epsilon) == (u >= low[a]) for u in range(a + 1))
        weights = c[:, layout.local].T
        tm, thm = bootstrap._window_ties(np.ascontiguousarray(weights), rh, m, epsilon)
        cd_matrix = bootstrap._concordance_matrices(layout, rh, m, epsilon)
        for b in range(len(counts)):
            cd, tm_direct, thm_direct = direct_pair_counts(h, m, weights[:, b], epsilon)
            assert (tm[b], thm[b]) == (tm_direct, thm_direct)
            assert 0.5 * c[b] @ cd_matrix @ c[b] == cd
    frame = pd.DataFrame({"video_id": [f"v{v:02d}" for v in vid], "system": "S", "human": h, "metric": m})
    videos = sorted(frame["video_id"].unique())
    for method in ("kendall_b", "accuracy_tc"):
        epsilon = 0.3 if method == "accuracy_tc" else None
        values = bootstrap.bootstrap_segment(frame, "human", "metric", method, "none", counts, videos, epsilon=epsilon)
        for row, value in zip(counts, values):
            assert value == pytest.approx(reference(method, expanded(frame, videos, row), epsilon or 0.0), abs=1e-12)


@pytest.mark.parametrize("path", ["sorted", "levels", "matrix"])
@pytest.mark.parametrize("method", METHODS[2:])
@pytest.mark.parametrize("group_by", ["none", "system"])
def test_each_pair_path_gives_each_resample_of_the_expanded_sample(method, group_by, path, monkeypatch):
    """The same check as above with each way of counting discordant pairs forced on: the merge sort (groups of
    about one caption per video), the sweep over human levels (Likert scales) and the videos x videos forms -
    the small frames here would otherwise pick one of them by cost."""
    monkeypatch.setattr(bootstrap, "PAIR_PATH", path)
    monkeypatch.setattr(bootstrap, "SORTED_BLOCK", 4)  # several merge levels even on small groups
    test_each_resample_equals_the_statistic_of_the_expanded_sample(method, group_by)


def test_pair_path_follows_the_costs():
    likert = np.repeat(np.arange(5), 2000)  # 10,000 captions on a 5-point scale
    assert bootstrap.pair_path(likert, 2000) == "levels"
    continuous = np.arange(2000)  # 2,000 distinct human scores, one caption per video
    assert bootstrap.pair_path(continuous, 2000) == "sorted"
    assert bootstrap.pair_path(np.arange(600), 30) == "matrix"  # many captions per video, many levels


def test_weighted_inversions_equal_pair_enumeration():
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 64, 65, 200):
        r = rng.integers(0, 6, n)
        tau = r + rng.integers(0, 3, n)
        weights = rng.poisson(1.0, (n, 4)).astype(float)
        expected = [
            sum(weights[i, b] * weights[j, b] for i in range(n) for j in range(i + 1, n) if r[i] >= tau[j])
            for b in range(4)
        ]
        for block in (1, 4, 64):
            assert bootstrap.weighted_inversions(r, tau, weights, block=block).tolist() == expected


@pytest.mark.parametrize("method", METHODS[2:])
def test_sorted_and_matrix_pair_counts_agree_on_larger_random_data(method, monkeypatch):
    """400 captions of 300 videos with ties on both sides, 50 resamples: the sorted count, the level sweep and the
    videos x videos forms give the same values (all exact), and tau-b agrees with SciPy on an expanded resample."""
    rng = np.random.default_rng(9)
    vid = np.sort(rng.integers(0, 300, 400))
    h = rng.integers(1, 6, 400).astype(float)
    m = np.round(rng.normal(size=400), 1)
    counts = bootstrap.video_resamples(300, 50, seed=3).astype(float)
    epsilon = 0.2 if method == "accuracy_tc" else None
    values = {}
    for path in ("sorted", "levels", "matrix"):
        monkeypatch.setattr(bootstrap, "PAIR_PATH", path)
        values[path] = bootstrap._weighted_pairs(counts, vid, h, m, method, epsilon)
    fast, matrix = values["sorted"], values["matrix"]
    assert np.allclose(fast, matrix, rtol=0, atol=1e-12, equal_nan=True)
    assert np.allclose(values["levels"], matrix, rtol=0, atol=1e-12, equal_nan=True)
    if method == "kendall_b":
        row = counts[0].astype(int)
        keep = np.repeat(np.arange(400), row[vid])
        assert fast[0] == pytest.approx(scipy_stats.kendalltau(h[keep], m[keep], variant="b")[0], abs=1e-12)


@pytest.mark.parametrize("group_by", ["none", "system"])
def test_spearman_of_distinct_metric_scores_equals_scipy_on_each_expanded_resample(group_by):
    """Metric scores all distinct (the shortcut of _weighted_spearman: ranks from the cumulative weights alone)
    and with ties (the general path), against SciPy's spearmanr of every resample built explicitly."""
    frame = frame_with_uneven_videos(7)
    frame["continuous"] = frame["metric"] + np.random.default_rng(1).normal(scale=0.3, size=len(frame))
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 8, seed=2)
    many = bootstrap.bootstrap_segment_many(
        frame, "human", ["continuous", "metric"], "spearman", group_by, counts, videos
    )
    for name in ("continuous", "metric"):
        for row, value in zip(counts, many[name]):
            sample = expanded(frame, videos, row)
            groups = [sample] if group_by == "none" else [g for _, g in sample.groupby("system")]
            expected = [scipy_stats.spearmanr(g["human"], g[name])[0] for g in groups if len(g) > 1]
            expected = [e for e in expected if np.isfinite(e)]
            assert value == pytest.approx(np.mean(expected), abs=1e-12)
