"""Public results of a Direct Assessment campaign (a contract: metrics_eval and outside scripts call these).

- ``caption_scores(campaign)``: DataFrame with columns ``video_id`` (the video's external id), ``system``
  (name), ``raw`` (mean 0-100 score), ``z`` (mean z-score), ``n`` (judgments), ``is_human`` (the caption
  belongs to the campaign's human caption set): one row per caption, judgments of workers who passed quality
  control only. The human system is included: it is scored from the judgments of the hidden originals.
- ``system_scores(campaign)``: DataFrame with columns ``system``, ``raw``, ``z``, ``n``, ``is_human``, sorted by
  z descending.
- ``report(campaign)``: the JSON document of ``manage.py da_report --format json``.
- ``scores(campaign)``: the caption scores, the system scores and the workers per QC status
  (``{"passed": n, "failed": n, "insufficient_data": n, "in_progress": n}``) of one and the same analysis; the
  counts say why there are no scores yet (no worker has passed quality control).

``campaign`` is a Campaign or its name. Everything is computed from the stored judgments with the campaign's
parameters (see assessment/analysis.py and docs/direct-assessment.md).
"""

from typing import NamedTuple

import pandas as pd

from .analysis import analyse
from .models import Campaign
from .scoring import CAPTION_COLUMNS, SYSTEM_COLUMNS

PUBLIC_CAPTION_COLUMNS = [*CAPTION_COLUMNS, "is_human"]
PUBLIC_SYSTEM_COLUMNS = [*SYSTEM_COLUMNS, "is_human"]


def _campaign(campaign):
    if isinstance(campaign, Campaign):
        return campaign
    return Campaign.objects.select_related("human_system").get(name=campaign)


class Scores(NamedTuple):
    captions: pd.DataFrame  # as caption_scores
    systems: pd.DataFrame  # as system_scores
    workers_by_status: dict  # QC status -> workers (every status, 0 included)


def caption_scores(campaign):
    return analyse(_campaign(campaign)).captions[PUBLIC_CAPTION_COLUMNS].copy()


def system_scores(campaign):
    return analyse(_campaign(campaign)).systems[PUBLIC_SYSTEM_COLUMNS].copy()


def report(campaign):
    return analyse(_campaign(campaign)).report()


def scores(campaign):
    analysis = analyse(_campaign(campaign))
    return Scores(
        analysis.captions[PUBLIC_CAPTION_COLUMNS].copy(),
        analysis.systems[PUBLIC_SYSTEM_COLUMNS].copy(),
        dict(analysis.parameters["n_workers_by_status"]),
    )
