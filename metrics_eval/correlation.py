"""Correlation of metric scores with human scores: pure functions over a DataFrame of captions.

The frame has one row per caption with the columns ``video_id``, ``system``, one column per human score and one
per metric (floats; NaN where a score is missing). A caption missing either score is left out of that pair's
correlation, so ``n`` can differ between columns.

Levels and grouping (Deutsch, Foster & Freitag 2023; WMT metrics task, Freitag et al. 2022):

- segment level, ``group_by="none"``: one correlation over all captions (the FactVC paper's Pearson
  correlations per paragraph / sentence / word level, Liu & Wan 2023);
- segment level, ``group_by="video"``: a correlation among the captions of each video (the systems' captions
  of the same input, "group by item"), averaged over the videos where it is defined;
- segment level, ``group_by="system"``: a correlation among each system's captions, averaged over systems;
- system level: each system's mean human score against its mean metric score (TRECVID / WMT system level).

Methods: ``pearson``, ``spearman``, ``kendall_b``, ``kendall_c``, ``accuracy`` (pairwise accuracy with ties,
acc_eq) and ``accuracy_tc`` (acc_eq after tie calibration; the calibrated epsilon is reported); see
``metrics_eval.stats`` for the definitions and sources.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import stats

METHODS = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall_b": "Kendall τ-b",
    "kendall_c": "Kendall τ-c",
    "accuracy": "pairwise accuracy (acc_eq)",
    "accuracy_tc": "tie-calibrated pairwise accuracy (acc*_eq)",
}
GROUPINGS = ("none", "video", "system")
LEVELS = ("segment", "system")
GROUP_COLUMNS = {"video": "video_id", "system": "system"}
PAIR_METHODS = ("kendall_b", "kendall_c", "accuracy", "accuracy_tc")


@dataclass
class Correlation:
    value: float
    n: int  # captions (segment level) or systems (system level) with both scores
    groups: int = 1  # groups whose correlation is defined (averaged)
    epsilon: float | None = None  # tie calibration threshold (accuracy_tc)


def check_method(method):
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: use one of {', '.join(METHODS)}")


def rowwise(method, h, m, epsilon=None):
    """The statistic for each row of the arrays h and m (see metrics_eval.stats)."""
    check_method(method)
    if method == "pearson":
        return stats.pearson_rows(h, m)[0]
    if method == "spearman":
        return stats.spearman_rows(h, m)[0]
    if method == "accuracy_tc" and epsilon is None:
        raise ValueError("accuracy_tc needs the calibrated epsilon")
    counts = stats.pair_counts_rows(h, m, epsilon=epsilon or 0.0)
    if method == "kendall_b":
        return stats.tau_b(counts)
    if method == "kendall_c":
        return stats.tau_c(counts)
    return stats.accuracy(counts)


def group_rows(frame, columns, group_by):
    """Arrays (groups x largest group) of ``columns`` with NaN padding, one row per group (one row for "none")."""
    if group_by not in GROUPINGS:
        raise ValueError(f"unknown grouping {group_by!r}: use one of {', '.join(GROUPINGS)}")
    if group_by == "none":
        return [frame[c].to_numpy(dtype=float)[None, :] for c in columns]
    codes, _ = pd.factorize(frame[GROUP_COLUMNS[group_by]], sort=True)
    position = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    width = int(position.max()) + 1 if len(position) else 0
    arrays = []
    for column in columns:
        array = np.full((codes.max() + 1 if len(codes) else 0, width), np.nan)
        array[codes, position] = frame[column].to_numpy(dtype=float)
        arrays.append(array)
    return arrays


def _mean_defined(values):
    defined = values[np.isfinite(values)]
    return (float(defined.mean()) if len(defined) else float("nan")), int(len(defined))


def segment_correlation(frame, human, metric, method, group_by="none", epsilon=None):
    """Segment-level correlation of ``metric`` with ``human`` (captions with both scores)."""
    check_method(method)
    data = frame.loc[frame[human].notna() & frame[metric].notna()]
    h, m = group_rows(data, [human, metric], group_by)
    if method == "accuracy_tc" and epsilon is None:
        epsilon, _ = stats.tie_calibration(h, m)
    value, groups = _mean_defined(rowwise(method, h, m, epsilon))
    return Correlation(value, len(data), groups, epsilon if method == "accuracy_tc" else None)


def system_means(frame, human, metric, *, human_weight=None):
    """Per system: the mean human score (weighted by ``human_weight`` if given) and the mean metric score, over
    the captions that have both. Returns a DataFrame indexed by system with columns ``human`` and ``metric``."""
    data = frame.loc[frame[human].notna() & frame[metric].notna()]
    weights = data[human_weight].to_numpy(dtype=float) if human_weight else np.ones(len(data))
    grouped = pd.DataFrame(
        {
            "system": data["system"].to_numpy(),
            "hw": data[human].to_numpy(dtype=float) * weights,
            "w": weights,
            "metric": data[metric].to_numpy(dtype=float),
        }
    ).groupby("system", sort=True)
    sums = grouped.sum()
    return pd.DataFrame({"human": sums["hw"] / sums["w"], "metric": grouped["metric"].mean()})


def system_correlation(frame, human, metric, method, *, human_system=None, human_weight=None, epsilon=None):
    """System-level correlation: mean metric score per system against the system's human score.

    ``human_system`` (a Series indexed by system) replaces the mean of the captions' human scores, e.g. the DA
    campaign's own system scores.
    """
    check_method(method)
    means = system_means(frame, human, metric, human_weight=human_weight)
    if human_system is not None:
        means["human"] = human_system.reindex(means.index).astype(float)
        means = means.dropna()
    h, m = means["human"].to_numpy()[None, :], means["metric"].to_numpy()[None, :]
    if method == "accuracy_tc" and epsilon is None:
        epsilon, _ = stats.tie_calibration(h, m)
    value = float(rowwise(method, h, m, epsilon)[0])
    return Correlation(value, len(means), 1, epsilon if method == "accuracy_tc" else None)


def ranking_comparison(human_scores, metric_scores):
    """Compare the system ranking of a metric with the human one (both Series indexed by system, higher is
    better). Returns the human order, each system's human and metric rank (1 = best, ties share the best rank),
    and the pairs of systems the metric orders against the people (strictly, in opposite directions)."""
    both = pd.DataFrame({"h": human_scores, "m": metric_scores}).dropna()  # systems with both scores
    systems = list(both.index)
    h, m = both["h"].to_numpy(dtype=float), both["m"].to_numpy(dtype=float)
    human_rank = pd.Series(h, index=systems).rank(ascending=False, method="min")
    metric_rank = pd.Series(m, index=systems).rank(ascending=False, method="min")
    inverted = []
    for i, a in enumerate(systems):
        for j, b in enumerate(systems):
            if h[i] > h[j] and m[i] < m[j]:
                inverted.append([a, b])  # people prefer a over b, the metric prefers b
    order = sorted(systems, key=lambda s: (human_rank[s], s))
    involved = {s for pair in inverted for s in pair}
    return {
        "order": order,
        "human_rank": {s: int(human_rank[s]) for s in order},
        "metric_rank": {s: int(metric_rank[s]) for s in order},
        "inverted_pairs": inverted,
        "inconsistent": [s for s in order if s in involved],
    }
