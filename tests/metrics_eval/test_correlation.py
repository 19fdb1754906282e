"""Segment- and system-level correlations over a caption frame, against SciPy applied group by group."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from metrics_eval import correlation

# groups whose scores are constant have no correlation (SciPy warns; the engine leaves them out)
pytestmark = pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")


def accuracy_by_pairs(h, m):
    good = total = 0
    for i, j in itertools.combinations(range(len(h)), 2):
        total += 1
        good += (h[i] == h[j] and m[i] == m[j]) or (h[i] - h[j]) * (m[i] - m[j]) > 0
    return good / total if total else np.nan


REFERENCE = {
    "pearson": lambda h, m: scipy_stats.pearsonr(h, m)[0],
    "spearman": lambda h, m: scipy_stats.spearmanr(h, m)[0],
    "kendall_b": lambda h, m: scipy_stats.kendalltau(h, m, variant="b")[0],
    "kendall_c": lambda h, m: scipy_stats.kendalltau(h, m, variant="c")[0],
    "accuracy": accuracy_by_pairs,
}


def caption_frame(seed=0, videos=25, systems=4):
    rng = np.random.default_rng(seed)
    n = videos * systems
    quality = rng.normal(size=n)
    return pd.DataFrame(
        {
            "video_id": np.repeat([f"v{i:02d}" for i in range(videos)], systems),
            "system": np.tile([f"S{s}" for s in range(systems)], videos),
            "human": np.clip(np.round(3 + quality + rng.normal(scale=0.7, size=n)), 1, 5),
            "metric": np.round(quality + rng.normal(size=n), 1),
            "weight": rng.integers(1, 4, n).astype(float),
        }
    )


@pytest.mark.parametrize("method", list(REFERENCE))
def test_no_grouping_is_one_correlation_over_all_captions(method):
    frame = caption_frame(1)
    frame.loc[[3, 17], "metric"] = np.nan  # captions without a score are left out
    result = correlation.segment_correlation(frame, "human", "metric", method)
    kept = frame.dropna()
    assert result.n == len(kept) == 98
    assert result.value == pytest.approx(REFERENCE[method](kept["human"].to_numpy(), kept["metric"].to_numpy()))


@pytest.mark.parametrize("group_by, column", [("video", "video_id"), ("system", "system")])
@pytest.mark.parametrize("method", list(REFERENCE))
def test_grouped_correlation_is_the_mean_over_groups(method, group_by, column):
    frame = caption_frame(2)
    expected = []
    for _, group in frame.groupby(column):
        value = REFERENCE[method](group["human"].to_numpy(), group["metric"].to_numpy())
        if np.isfinite(value):
            expected.append(value)
    result = correlation.segment_correlation(frame, "human", "metric", method, group_by=group_by)
    assert result.groups == len(expected)
    assert result.value == pytest.approx(np.mean(expected))


@pytest.mark.parametrize("method", list(REFERENCE))
def test_system_level_correlates_system_means(method):
    frame = caption_frame(3, systems=7)
    means = frame.groupby("system")[["human", "metric"]].mean()
    result = correlation.system_correlation(frame, "human", "metric", method)
    assert result.n == 7
    assert result.value == pytest.approx(REFERENCE[method](means["human"].to_numpy(), means["metric"].to_numpy()))


def test_system_level_with_weights_and_given_system_scores():
    frame = caption_frame(4, systems=6)
    weighted = frame.assign(hw=frame["human"] * frame["weight"]).groupby("system")[["hw", "weight"]].sum()
    human = weighted["hw"] / weighted["weight"]
    metric = frame.groupby("system")["metric"].mean()
    result = correlation.system_correlation(frame, "human", "metric", "pearson", human_weight="weight")
    assert result.value == pytest.approx(scipy_stats.pearsonr(human, metric)[0])
    given = pd.Series([5.0, 1.0, 2.0, 4.0, 3.0, 0.0], index=[f"S{s}" for s in range(6)])
    result = correlation.system_correlation(frame, "human", "metric", "spearman", human_system=given)
    assert result.value == pytest.approx(scipy_stats.spearmanr(given.sort_index(), metric.sort_index())[0])


def test_tie_calibrated_accuracy_reports_its_epsilon():
    frame = caption_frame(5)
    result = correlation.segment_correlation(frame, "human", "metric", "accuracy_tc", group_by="video")
    plain = correlation.segment_correlation(frame, "human", "metric", "accuracy", group_by="video")
    assert result.epsilon is not None and result.epsilon >= 0
    assert result.value >= plain.value  # epsilon 0 is always a candidate


def test_ranking_comparison_marks_systems_ordered_against_people():
    people = pd.Series({"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0})
    metric = pd.Series({"A": 0.30, "B": 0.50, "C": 0.20, "D": 0.10})
    comparison = correlation.ranking_comparison(people, metric)
    assert comparison["order"] == ["A", "B", "C", "D"]
    assert comparison["metric_rank"] == {"A": 2, "B": 1, "C": 3, "D": 4}
    assert comparison["inverted_pairs"] == [["A", "B"]]
    assert comparison["inconsistent"] == ["A", "B"]


def test_unknown_method_or_grouping_is_refused():
    frame = caption_frame(6)
    with pytest.raises(ValueError, match="unknown method"):
        correlation.segment_correlation(frame, "human", "metric", "cosine")
    with pytest.raises(ValueError, match="unknown grouping"):
        correlation.segment_correlation(frame, "human", "metric", "pearson", group_by="worker")
