"""The full analysis of a campaign: QC per worker, z-scores, caption and system scores, the significance matrix
and the clustered ranking. ``analyse_frame`` is pure (a DataFrame in, results out); ``analyse`` loads a campaign
with the loader and runs it with the campaign's parameters."""

import math
from dataclasses import dataclass, field

import pandas as pd

from . import loading, quality_control, scoring, significance

SIGNIFICANCE_TEST = (
    "one-sided Wilcoxon rank-sum (scipy.stats.mannwhitneyu, alternative='greater') on per-caption mean z"
)


@dataclass
class Analysis:
    parameters: dict
    qc: pd.DataFrame  # worker, worker_id, n_pairs, statistic, p_value, passed, status, n_repeats, repeats_p_value
    captions: pd.DataFrame  # video_id, system, raw, z, n, is_human
    systems: pd.DataFrame  # system, raw, z, n, n_captions, z_sd, rank, cluster, is_human
    p_values: pd.DataFrame  # rows a, columns b: p of "a beats b"
    n_judgments: int = 0
    human_system: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def pass_rate(self):
        return quality_control.pass_rate(self.qc)

    @property
    def wins(self):
        return significance.wins(self.p_values, self.parameters["significance_threshold"])

    def report(self):
        """The JSON document of ``da_report --format json`` and of the results endpoint."""
        return {
            "parameters": self.parameters,
            "workers": [
                {
                    "worker_id": row.worker_id,
                    "n_pairs": int(row.n_pairs),
                    "p_value": _number(row.p_value),
                    "passed": bool(row.passed),
                    "status": row.status,
                }
                for row in self.qc.sort_values("worker_id").itertuples()
            ],
            "systems": [
                {
                    "system": row.system,
                    "raw": _number(row.raw),
                    "z": _number(row.z),
                    "n": int(row.n),
                    "is_human": bool(row.is_human),
                }
                for row in self.systems.itertuples()
            ],
            "wins": self.wins,
        }


def _number(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def analyse_frame(
    frame,
    *,
    test="wilcoxon",
    threshold=0.05,
    min_pairs=10,
    alpha=0.05,
    names=None,
    human_system=None,
    campaign=None,
    unfinished=(),
    workers=(),
):
    """Analyse a judgments frame (columns of loading.FRAME_COLUMNS). ``names`` maps worker keys to the ids
    shown in reports (default: the keys themselves); ``unfinished``: the workers still in progress (their
    judgments wait until they finish); ``workers``: the campaign's workers, who have a QC status (in progress,
    insufficient data) even before their first judgment."""
    qc = quality_control.worker_qc(
        frame, test=test, threshold=threshold, min_pairs=min_pairs, unfinished=unfinished, workers=workers
    )
    qc.insert(1, "worker_id", [str(names.get(w, w)) if names else str(w) for w in qc["worker"]])
    frame = frame.assign(z=scoring.standardise(frame))
    captions = scoring.caption_scores(frame, qc.loc[qc["passed"], "worker"])
    captions["is_human"] = captions["system"] == human_system
    systems = scoring.system_scores(captions)
    p_values = significance.win_matrix(captions, systems["system"].tolist())
    systems["rank"] = range(1, len(systems) + 1)
    systems["cluster"] = significance.clusters(p_values, alpha).to_numpy() if len(systems) else []
    systems["is_human"] = systems["system"] == human_system
    n_workers = len(qc)
    parameters = {
        "campaign": campaign,
        "qc_test": test,
        "qc_alternative": "original > degraded (one-sided)",
        "qc_threshold": threshold,
        "qc_min_pairs": min_pairs,
        "z_scores": "per worker over all their scores, sample SD (ddof=1); zero variance gives z = 0",
        "significance_test": SIGNIFICANCE_TEST,
        "significance_threshold": alpha,
        "human_system": human_system,
        "n_judgments": int(len(frame)),
        "n_workers": n_workers,
        "n_workers_passed": int(qc["passed"].sum()),
        "n_workers_by_status": quality_control.status_counts(qc),
        "pass_rate": quality_control.pass_rate(qc),
        "pass_rate_of": "workers with a verdict (passed or failed)",
    }
    return Analysis(
        parameters=parameters,
        qc=qc,
        captions=captions,
        systems=systems,
        p_values=p_values,
        n_judgments=len(frame),
        human_system=human_system,
    )


def analyse(campaign):
    """Analyse a campaign from the database with its own parameters."""
    frame = loading.judgments_frame(campaign)
    human = campaign.human_system.name if campaign.human_system_id else None
    workers = loading.campaign_workers(campaign)  # (every worker holding a HIT: one judged nothing yet too)
    return analyse_frame(
        frame,
        test=campaign.qc_test,
        threshold=campaign.qc_threshold,
        min_pairs=campaign.qc_min_pairs,
        alpha=campaign.significance_threshold,
        names=workers.names,
        human_system=human,
        campaign=campaign.name,
        unfinished=workers.unfinished,
        workers=sorted(workers.assigned),
    )
