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
            rows.append((f"v{v:02d}", s, float(np.clip(np.round(3 + quality + rng.normal(scale=0.6)), 1, 5)),
                         float(np.round(quality + rng.normal(), 1))))
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
        bootstrap.bootstrap_segment(frame, "human", "metric", "pearson", "none", counts, videos), 0.95)
    theirs = scipy_stats.bootstrap((h, m), lambda x, y: scipy_stats.pearsonr(x, y)[0], paired=True,
                                   vectorized=False, n_resamples=8000, method="percentile", confidence_level=0.95,
                                   rng=np.random.default_rng(2)).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.02)
    assert ours[1] == pytest.approx(theirs.high, abs=0.02)


@pytest.mark.parametrize("group_by", ["none", "system", "video"])
@pytest.mark.parametrize("method", ["spearman", "kendall_b"])
def test_many_metrics_at_once_give_the_same_values_as_one_at_a_time(method, group_by):
    frame = frame_with_uneven_videos(5)
    rng = np.random.default_rng(0)
    frame["other"] = frame["metric"] + rng.normal(size=len(frame))
    frame.loc[frame.index[:3], "other"] = np.nan  # a metric covering fewer captions
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), 50, seed=8)
    many = bootstrap.bootstrap_segment_many(frame, "human", ["metric", "other"], method, group_by, counts, videos)
    for name in ("metric", "other"):
        one = bootstrap.bootstrap_segment(frame, "human", name, method, group_by, counts, videos)
        np.testing.assert_allclose(many[name], one, atol=1e-12)
