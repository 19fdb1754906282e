"""Per-worker quality control of Direct Assessment (pure functions over a judgments DataFrame).

Source: Graham, Awad & Smeaton (PLoS ONE 2018), section "Quality control", after Graham et al. (Natural
Language Engineering 2017): a worker who reads the captions scores an original human caption higher than its
degraded copy. Per worker, the scores of (original, degraded) pairs that the worker rated both of are compared
with a one-sided test (alternative: originals score higher); the worker passes when p < threshold and there are
at least ``min_pairs`` pairs.

Tests (``test``):
- ``wilcoxon`` (default): Wilcoxon signed-rank test on the pairs, as ``scipy.stats.wilcoxon(original,
  degraded, alternative="greater")``;
- ``paired_t``: paired t-test (what WMT's published scripts ran), ``scipy.stats.ttest_rel``;
- ``mann_whitney``: the pairs' two score samples as independent samples (what Appraise runs),
  ``scipy.stats.mannwhitneyu``.
A worker whose test cannot be computed (no pairs, or every difference zero) gets p = 1: no evidence.

Status (``QC_STATUSES``, stored as ``QCResult.status``): a worker who has not finished (an assignment of the
campaign not completed) is ``in_progress``; a finished worker with fewer than ``min_pairs`` pairs, or fewer than
the test needs to reach p < threshold at all (``planning.pairs_to_pass``: 5 for the one-sided Wilcoxon test at
0.05), has ``insufficient_data`` (no verdict is possible, which is not the same as failing); otherwise
``passed`` when p < threshold, else ``failed``. Only ``passed`` workers count towards scores.

Repeats: for workers who pass, the exact repeats are compared with the first showing of the same item by a
two-sided Wilcoxon signed-rank test; a consistent worker's repeats do not differ significantly.

Input frame columns: ``worker``, ``item``, ``score``, ``item_type``, ``control_of`` (the degraded copy's
original; the repeat's system item).
"""

import numpy as np
import pandas as pd

from . import rank_tests

TESTS = tuple(rank_tests.TESTS)
QC_COLUMNS = ["worker", "n_pairs", "statistic", "p_value", "passed", "status", "n_repeats", "repeats_p_value"]
PASSED, FAILED, INSUFFICIENT_DATA, IN_PROGRESS = "passed", "failed", "insufficient_data", "in_progress"
QC_STATUSES = (PASSED, FAILED, INSUFFICIENT_DATA, IN_PROGRESS)


def status_of(n_pairs, p_value, finished, *, threshold=0.05, min_pairs=10):
    """The QC status (arrays in, array of status strings out): see the module's docstring."""
    n_pairs, p_value = np.asarray(n_pairs), np.asarray(p_value, dtype=float)
    finished = np.broadcast_to(np.asarray(finished, dtype=bool), n_pairs.shape)
    return np.select(
        [~finished, n_pairs < min_pairs, p_value < threshold], [IN_PROGRESS, INSUFFICIENT_DATA, PASSED], default=FAILED
    ).astype(object)


def _pairs(frame, control_type, partner_type, control_name, partner_name):
    controls = frame.loc[frame["item_type"] == control_type, ["worker", "control_of", "score"]]
    partners = frame.loc[frame["item_type"] == partner_type, ["worker", "item", "score"]]
    pairs = controls.merge(
        partners, left_on=["worker", "control_of"], right_on=["worker", "item"], suffixes=("_control", "_partner")
    )
    return pd.DataFrame(
        {
            "worker": pairs["worker"].to_numpy(),
            partner_name: pairs["score_partner"].to_numpy(dtype=float),
            control_name: pairs["score_control"].to_numpy(dtype=float),
        }
    )


def qc_pairs(frame):
    """(worker, original, degraded) score pairs: a degraded copy and its original rated by the same worker."""
    return _pairs(frame, "degraded", "original", "degraded", "original")


def repeat_pairs(frame):
    """(worker, first, repeat) score pairs: a repeat and the system item it repeats, rated by the same worker."""
    return _pairs(frame, "repeat", "system", "repeat", "first")


def test_by_worker(pairs, a, b, test, alternative="greater"):
    """Run ``test`` of column ``a`` against column ``b`` for every worker's pairs, vectorised over the workers
    with the same number of pairs. Returns a DataFrame indexed by worker: n, statistic, p_value."""
    function = rank_tests.TESTS[test]
    pairs = pairs.sort_values("worker", kind="stable")
    workers, starts, counts = np.unique(pairs["worker"].to_numpy(), return_index=True, return_counts=True)
    x_all, y_all = pairs[a].to_numpy(dtype=float), pairs[b].to_numpy(dtype=float)
    statistic, p_value = np.full(len(workers), np.nan), np.full(len(workers), np.nan)
    for n in np.unique(counts):
        rows = np.flatnonzero(counts == n)
        index = starts[rows, None] + np.arange(n)
        statistic[rows], p_value[rows] = function(x_all[index], y_all[index], alternative=alternative)
    return pd.DataFrame(
        {"n": counts, "statistic": statistic, "p_value": p_value}, index=pd.Index(workers, name="worker")
    )


def worker_qc(frame, *, test="wilcoxon", threshold=0.05, min_pairs=10, unfinished=(), workers=()):
    """QC of every worker in ``frame``: n_pairs, statistic, p_value, passed, status, n_repeats, repeats_p_value.
    ``unfinished``: the workers (keys of ``frame["worker"]``) with an assignment that is not completed.
    ``workers``: workers of the campaign to include as well when they have no judgment in ``frame`` (a HIT taken,
    nothing rated yet): 0 pairs, so in progress while unfinished, else insufficient data."""
    if test not in rank_tests.TESTS:
        raise ValueError(f"unknown QC test {test!r}; choose one of {', '.join(TESTS)}")
    keys = frame["worker"].to_numpy()
    if len(workers):
        keys = np.concatenate([keys, np.asarray(list(workers), dtype=keys.dtype)])
    workers = pd.Index(np.unique(keys), name="worker")
    result = test_by_worker(qc_pairs(frame), "original", "degraded", test).reindex(workers)
    n_pairs = result["n"].fillna(0).astype(int)
    p_value = result["p_value"].fillna(1.0)  # no pairs, or nothing to test on: no evidence
    from .planning import pairs_to_pass

    status = status_of(
        n_pairs.to_numpy(),
        p_value.to_numpy(),
        ~workers.isin(np.asarray(list(unfinished))),
        threshold=threshold,
        min_pairs=max(min_pairs, pairs_to_pass(test, threshold)),
    )
    passed = pd.Series(status == PASSED, index=workers)
    repeats = test_by_worker(repeat_pairs(frame), "first", "repeat", "wilcoxon", alternative="two-sided")
    repeats = repeats.reindex(workers)
    return pd.DataFrame(
        {
            "worker": workers.to_numpy(),
            "n_pairs": n_pairs.to_numpy(),
            "statistic": result["statistic"].to_numpy(),
            "p_value": p_value.to_numpy(),
            "passed": passed.to_numpy(),
            "status": status,
            "n_repeats": repeats["n"].fillna(0).astype(int).to_numpy(),
            "repeats_p_value": repeats["p_value"].where(passed.to_numpy()).to_numpy(),
        }
    )


def status_counts(qc):
    """Workers per status (every status listed, 0 included)."""
    counts = qc["status"].value_counts() if len(qc) else {}
    return {status: int(counts.get(status, 0)) for status in QC_STATUSES}


def pass_rate(qc):
    """Share of the workers with a verdict (passed or failed) who passed; None when no worker has one."""
    if not len(qc):
        return None
    decided = qc["status"].isin([PASSED, FAILED])
    return float(qc.loc[decided, "passed"].mean()) if decided.any() else None
