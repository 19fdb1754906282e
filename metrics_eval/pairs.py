"""Pairwise ranking accuracy on correct/foil caption pairs (ActivityNet-FOIL, Shi et al. 2022 "EMScore",
ActivityNet-FOIL): the share of pairs in which a metric scores the correct caption above its foil.

A pair whose two scores are equal is worth ``tie_credit`` (default 0.5, the expected accuracy of breaking the tie
at random; 0 counts ties as errors, as a strict ">" does). Pure functions over a DataFrame with one row per pair:
``video_id`` and, per metric, the columns ``<metric>:correct`` and ``<metric>:foil``. Confidence intervals
resample videos, like the correlations.
"""

import numpy as np
import pandas as pd

from .bootstrap import percentile_interval


def pair_outcomes(correct, foil, tie_credit=0.5):
    """1 where the correct caption scores higher, ``tie_credit`` on a tie, 0 otherwise; NaN if a score is missing."""
    correct, foil = np.asarray(correct, dtype=float), np.asarray(foil, dtype=float)
    outcome = np.where(correct > foil, 1.0, np.where(correct == foil, tie_credit, 0.0))
    return np.where(np.isnan(correct) | np.isnan(foil), np.nan, outcome)


def ranking_accuracy(frame, metric, tie_credit=0.5):
    """(accuracy, number of pairs with both scores)."""
    outcome = pair_outcomes(frame[f"{metric}:correct"], frame[f"{metric}:foil"], tie_credit)
    outcome = outcome[~np.isnan(outcome)]
    return (float(outcome.mean()) if len(outcome) else float("nan")), int(len(outcome))


def bootstrap_accuracy(frame, metric, counts, videos, tie_credit=0.5):
    """Bootstrap values of the accuracy, resampling videos (counts from ``video_resamples``)."""
    outcome = pair_outcomes(frame[f"{metric}:correct"], frame[f"{metric}:foil"], tie_credit)
    keep = ~np.isnan(outcome)
    codes = pd.Index(videos).get_indexer(frame["video_id"].to_numpy()[keep])
    n_videos = len(videos)
    wins = np.bincount(codes, weights=outcome[keep], minlength=n_videos)
    totals = np.bincount(codes, minlength=n_videos).astype(float)
    counts = np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ wins) / (counts @ totals)


def accuracy_table(frame, metrics, counts, videos, confidence=0.95, tie_credit=0.5):
    """{metric: {"r": accuracy, "ci": [lo, hi], "n": pairs}} for each metric."""
    table = {}
    for metric in metrics:
        value, n = ranking_accuracy(frame, metric, tie_credit)
        low, high = percentile_interval(bootstrap_accuracy(frame, metric, counts, videos, tie_credit), confidence)
        table[metric] = {"r": value, "ci": [low, high], "n": n}
    return table
