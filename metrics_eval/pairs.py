"""Pairwise ranking accuracy on correct/foil caption pairs (ActivityNet-FOIL, Shi et al. 2022 "EMScore",
ActivityNet-FOIL): the share of pairs in which a metric scores the correct caption above its foil.

A pair whose two scores are equal is worth ``tie_credit`` (default 0.5, the expected accuracy of breaking the tie
at random; 0 counts ties as errors, as a strict ">" does). Pure functions over a DataFrame with one row per pair:
``video_id`` and, per metric, the columns ``<metric>:correct`` and ``<metric>:foil``. Confidence intervals
resample videos, like the correlations.

A pair with a caption of a human system (its captions are references) is scored only where both of its captions
were scored against the same references without the human caption (``select_human_pairs``).
"""

import numpy as np
import pandas as pd

from . import significance
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


def common_pairs_pvalue(frame, counts, videos, tie_credit=0.5):
    """better(a, b): the paired bootstrap p-value of "metric a is more accurate than metric b", both measured on
    the pairs both have outcomes for (as the Williams and permutation tests use the rows common to two metrics):
    metrics may have scored different pairs (imported scores of a subset; pairs with a human caption left out for
    one metric and not another), and comparing their accuracies over different pairs says nothing."""
    outcomes = {}
    samples = {}  # (metric, its rows): bootstrapped once, however many metrics it is compared with on them
    cache = {}

    def outcome(metric):
        if metric not in outcomes:
            outcomes[metric] = pair_outcomes(frame[f"{metric}:correct"], frame[f"{metric}:foil"], tie_credit)
        return outcomes[metric]

    def sample(metric, rows):
        key = (metric, rows.tobytes())
        if key not in samples:
            samples[key] = bootstrap_accuracy(frame.loc[rows], metric, counts, videos, tie_credit)
        return samples[key]

    def better(a, b):
        if (a, b) not in cache:
            common = ~np.isnan(outcome(a)) & ~np.isnan(outcome(b))
            cache[(a, b)] = significance.paired_bootstrap_pvalue(sample(a, common), sample(b, common))
        return cache[(a, b)]

    return better


def different_pairs_caution(table):
    """A caution when the metrics of a pairs table ({metric: {"r", "n", ...}}) were measured on different numbers
    of pairs (None otherwise): "best" compares accuracies over different pairs (the clusters compare each two
    metrics on the pairs both scored)."""
    counts = {metric: entry.get("n") for metric, entry in table.items() if entry.get("n")}
    if len(set(counts.values())) <= 1:
        return None
    listed = ", ".join(f"{metric} {n}" for metric, n in counts.items())
    return (
        f"Caution: the metrics were measured on different pairs ({listed}): their accuracies, and so the best one, "
        "are not over the same pairs; the clusters compare each two metrics on the pairs both scored."
    )


def select_human_pairs(
    frame, pairs, pair_scores, metrics, *, same_references=(), reference_free=(), before_pair_scores=()
):
    """The pairs frame with only fair scores of the pairs that have a caption of a human system, and what was done.

    Such a caption is a reference: scored against a reference set holding it, it scores (near) perfectly, and
    its foil - often the same text with a word changed - does too when the human caption is among its
    references. So for those pairs a metric's scores are kept only when both captions were scored against the
    same references without the human caption, or without references:

    - metrics in ``same_references`` (computed): their scores of such pairs are replaced by the pair scores
      (``pair_scores``: [pair_id, metric, correct, foil], both captions against the video's references without
      the human caption's own); a pair without them is left out of the metric's cell and counted in
      ``computed_before_pair_scores`` for metrics in ``before_pair_scores`` (computed by a version that did not
      score pairs), else in ``not_scored`` (imported after the metric was computed); a pair whose video has no
      other reference (NaN scores) in ``without_other_references``;
    - metrics in ``reference_free``: their scores are kept;
    - any other metric (imported: not known to score a pair's two captions against the same references without
      the human caption): those pairs are left out of its cell (``metrics_without_them``).

    ``frame``: rows aligned with ``pairs`` ([pair_id, correct_system, foil_system, correct_human, foil_human]).
    Returns (frame, description); ``n`` of each cell then counts only the pairs compared fairly.
    """
    human = (pairs["correct_human"].astype(bool) | pairs["foil_human"].astype(bool)).to_numpy()
    systems = set(pairs.loc[pairs["correct_human"].astype(bool), "correct_system"])
    systems |= set(pairs.loc[pairs["foil_human"].astype(bool), "foil_system"])
    description = {
        "systems": sorted(systems),
        "pairs": int(human.sum()),
        "metrics_same_references": [],
        "metrics_reference_free": [],
        "metrics_without_them": [],
        "not_scored": {},
        "computed_before_pair_scores": {},
        "without_other_references": {},
    }
    if not human.any():
        return frame, description
    frame = frame.copy()
    ids = pd.Index(pairs["pair_id"].to_numpy()[human])
    for metric in metrics:
        columns = [f"{metric}:correct", f"{metric}:foil"]
        if metric in reference_free:
            description["metrics_reference_free"].append(metric)
        elif metric in same_references:
            description["metrics_same_references"].append(metric)
            own = pair_scores.loc[pair_scores["metric"] == metric].set_index("pair_id")
            found = ids.isin(own.index)
            for column, side in zip(columns, ("correct", "foil")):
                frame.loc[human, column] = own[side].reindex(ids).to_numpy(dtype=float)
            if missing := int((~found).sum()):
                key = "computed_before_pair_scores" if metric in before_pair_scores else "not_scored"
                description[key][metric] = missing
            unscored = found & np.isnan(frame.loc[human, columns[0]].to_numpy(dtype=float))
            if unscored.any():
                description["without_other_references"][metric] = int(unscored.sum())
        else:
            description["metrics_without_them"].append(metric)
            frame.loc[human, columns] = np.nan
    return frame, description
