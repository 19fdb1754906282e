"""Public results of a Direct Assessment campaign (a contract: metrics_eval and outside scripts call these).

- ``caption_scores(campaign)``: DataFrame with columns ``video_id`` (the video's external id), ``system``
  (name), ``raw`` (mean 0-100 score), ``z`` (mean z-score), ``n`` (judgments), ``is_human`` (the caption
  belongs to the campaign's human caption set): one row per caption, judgments of workers who passed quality
  control only. The human system is included: it is scored from the judgments of the hidden originals.
- ``system_scores(campaign)``: DataFrame with columns ``system``, ``raw``, ``z``, ``n``, ``is_human``, sorted by
  z descending.
- ``report(campaign)``: the JSON document of ``manage.py da_report --format json``.

``campaign`` is a Campaign or its name. Everything is computed from the stored judgments with the campaign's
parameters (see assessment/analysis.py and docs/direct-assessment.md).
"""

from .analysis import analyse
from .models import Campaign
from .scoring import CAPTION_COLUMNS, SYSTEM_COLUMNS

PUBLIC_CAPTION_COLUMNS = [*CAPTION_COLUMNS, "is_human"]
PUBLIC_SYSTEM_COLUMNS = [*SYSTEM_COLUMNS, "is_human"]


def _campaign(campaign):
    if isinstance(campaign, Campaign):
        return campaign
    return Campaign.objects.select_related("human_system").get(name=campaign)


def caption_scores(campaign):
    return analyse(_campaign(campaign)).captions[PUBLIC_CAPTION_COLUMNS].copy()


def system_scores(campaign):
    return analyse(_campaign(campaign)).systems[PUBLIC_SYSTEM_COLUMNS].copy()


def report(campaign):
    return analyse(_campaign(campaign)).report()
