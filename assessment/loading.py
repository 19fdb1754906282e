"""The thin loader between the ORM and the statistics: a campaign's judgments as one pandas DataFrame.

Two ``values_list`` queries whatever the size (the items of the campaign, tens of thousands of rows at most,
and the judgments, possibly millions, as three integers each), joined in pandas.

Frame columns: ``worker`` (Worker pk), ``item`` (Item pk), ``score``, ``item_type`` (categorical),
``control_of`` (Item pk or -1), ``caption`` (Caption pk), ``system`` (name), ``video`` (external id).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .models import Assignment, Item, ItemType, Judgment

FRAME_COLUMNS = ["worker", "item", "score", "item_type", "control_of", "caption", "system", "video"]
_TYPES = pd.CategoricalDtype(ItemType.values)


def items_frame(campaign):
    rows = list(
        Item.objects.filter(hit__campaign=campaign)
        .order_by()
        .values_list(
            "pk", "item_type", "control_of_id", "caption_id", "caption__system__name", "caption__video__external_id"
        )
    )
    frame = pd.DataFrame(rows, columns=["item", "item_type", "control_of", "caption", "system", "video"])
    frame["item_type"] = frame["item_type"].astype(_TYPES)
    frame["control_of"] = frame["control_of"].fillna(-1).astype(np.int64)
    frame["item"] = frame["item"].astype(np.int64)
    frame["caption"] = frame["caption"].astype(np.int64)
    return frame


def judgments_frame(campaign, worker_ids=None):
    """The campaign's judgments (of ``worker_ids`` only, if given) with their items' columns."""
    judgments = Judgment.objects.filter(assignment__hit__campaign=campaign).order_by()
    if worker_ids is not None:
        judgments = judgments.filter(assignment__worker_id__in=list(worker_ids))
    rows = list(judgments.values_list("assignment__worker_id", "item_id", "score"))
    values = np.array(rows, dtype=np.int64).reshape(-1, 3)
    frame = pd.DataFrame({"worker": values[:, 0], "item": values[:, 1], "score": values[:, 2]})
    items = items_frame(campaign)
    frame = frame.merge(items, on="item", how="inner", sort=False)
    return frame[FRAME_COLUMNS]


@dataclass
class CampaignWorkers:
    names: dict  # worker pk -> external id, of every worker with an assignment of the campaign
    unfinished: set  # worker pks with an assignment that is not completed (as unfinished_workers)
    assigned: set  # worker pks services.qc_statuses gives a status: an assignment not given back unfinished


def campaign_workers(campaign):
    """The campaign's workers for its analysis, in one query (its assignments, a few per worker): their ids, who is
    still rating, and who has a QC status whether or not they judged anything yet (services.qc_statuses: any
    assignment but one released before it was completed)."""
    found = CampaignWorkers({}, set(), set())
    rows = (
        Assignment.objects.filter(hit__campaign=campaign)
        .order_by()
        .values_list("worker_id", "worker__external_id", "completed_at", "released_at")
    )
    for worker, external_id, completed_at, released_at in rows:
        found.names[worker] = external_id
        if completed_at is None:
            found.unfinished.add(worker)
            if released_at is not None:
                continue  # given back unfinished: not theirs any more
        found.assigned.add(worker)
    return found


def unfinished_workers(campaign, worker_ids=None):
    """Worker pks with an assignment of the campaign that is not completed (one query)."""
    rows = Assignment.objects.filter(hit__campaign=campaign, completed_at__isnull=True)
    if worker_ids is not None:
        rows = rows.filter(worker_id__in=list(worker_ids))
    return set(rows.values_list("worker_id", flat=True).distinct())
