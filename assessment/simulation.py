"""A simulated crowd for planned campaigns: for tests (QC must keep diligent workers and drop the rest; the
ranking must recover the systems' true order), demos and the performance benchmark.

Every caption has a true quality: its system's quality plus a per-caption offset (normal, ``caption_sd``); a
degraded copy is ``degradation_drop`` points worse than its original. Worker kinds:

- ``diligent``: 50 + bias + scale * (quality - 50) + noise, with a personal bias and scale (the reason for z-scores);
- ``random``: uniform 0-100 (a random clicker);
- ``constant``: always the same score (an always-the-same clicker);
- ``reversed``: 100 - what a diligent worker would give (reads the scale backwards).

Scores are generated with NumPy for all judgments at once and written with ``bulk_create`` in batches.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.db import transaction
from django.utils import timezone

from .models import HIT, Assignment, Item, Judgment, Worker

KINDS = ("diligent", "random", "constant", "reversed")


@dataclass
class CrowdResult:
    workers: pd.DataFrame  # worker (pk), external_id, kind
    judgments: int


def item_qualities(items, system_quality, rng, *, caption_sd=8.0, degradation_drop=40.0):
    """True quality of every item (frame with item, item_type, caption, system, control_of)."""
    missing = sorted(set(items["system"]) - set(system_quality))
    if missing:  # a NaN quality would become an out-of-range score deep in the database
        raise ValueError(f"no quality given for system{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    captions = np.unique(items["caption"].to_numpy())
    offsets = pd.Series(rng.normal(0.0, caption_sd, len(captions)), index=captions)
    base = items["system"].map(system_quality).astype(float).to_numpy()
    quality = base + offsets.reindex(items["caption"].to_numpy()).to_numpy()
    degraded = (items["item_type"] == "degraded").to_numpy()
    return np.where(degraded, quality - degradation_drop, quality)


def scores_for(quality, kind, bias, scale, rng, *, noise_sd=10.0, constant=None):
    """Scores (int 0-100) for judgments of true ``quality`` by workers of ``kind`` (arrays of equal length)."""
    n = len(quality)
    diligent = 50.0 + bias + scale * (quality - 50.0) + rng.normal(0.0, noise_sd, n)
    score = np.select(
        [kind == "diligent", kind == "random", kind == "constant", kind == "reversed"],
        [diligent, rng.uniform(0, 100, n), np.full(n, 50.0) if constant is None else constant, 100.0 - diligent],
        default=diligent,
    )
    return np.clip(np.rint(score), 0, 100).astype(np.int64)


def simulate_campaign(
    campaign,
    crowd,
    system_quality,
    *,
    seed=0,
    hits_per_worker=1,
    noise_sd=10.0,
    caption_sd=8.0,
    degradation_drop=40.0,
    prefix="sim",
    batch_size=20000,
    on_batch=None,
):
    """Create workers (``crowd``: kind -> count), give each ``hits_per_worker`` HITs (spread evenly) and store
    their simulated scores. ``system_quality`` maps system names (the human one included) to 0-100 qualities."""
    rng = np.random.default_rng(seed)
    items = pd.DataFrame(
        list(
            Item.objects.filter(hit__campaign=campaign)
            .order_by("hit_id", "position")
            .values_list("pk", "hit_id", "item_type", "caption_id", "caption__system__name", "control_of_id")
        ),
        columns=["item", "hit", "item_type", "caption", "system", "control_of"],
    )
    items["quality"] = item_qualities(
        items, system_quality, rng, caption_sd=caption_sd, degradation_drop=degradation_drop
    )
    hit_ids = np.asarray(sorted(HIT.objects.filter(campaign=campaign).values_list("pk", flat=True)))
    kinds = np.concatenate([np.full(count, kind, dtype=object) for kind, count in crowd.items()])
    rng.shuffle(kinds)
    n_workers = len(kinds)
    if hits_per_worker > len(hit_ids):
        raise ValueError(f"{hits_per_worker} HITs per worker, but the campaign has {len(hit_ids)}")
    now = timezone.now()
    with transaction.atomic():
        workers = Worker.objects.bulk_create(
            [Worker(external_id=f"{prefix}-{i:06d}-{kind}", source="simulation") for i, kind in enumerate(kinds)],
            batch_size=batch_size,
        )
        worker_ids = np.array([w.pk for w in workers])
        slots = (np.arange(n_workers)[:, None] * hits_per_worker + np.arange(hits_per_worker)) % len(hit_ids)
        pairs = pd.DataFrame({"worker": np.repeat(worker_ids, hits_per_worker), "hit": hit_ids[slots.ravel()]})
        assignments = Assignment.objects.bulk_create(
            [Assignment(worker_id=int(w), hit_id=int(h), completed_at=now) for w, h in pairs.itertuples(index=False)],
            batch_size=batch_size,
        )
        pairs["assignment"] = [a.pk for a in assignments]
        profile = pd.DataFrame(
            {
                "worker": worker_ids,
                "kind": kinds,
                "bias": rng.normal(0, 10, n_workers),
                "scale": rng.uniform(0.6, 1.2, n_workers),
                "constant": rng.integers(20, 81, n_workers).astype(float),
            }
        )
        rows = pairs.merge(profile, on="worker").merge(items[["item", "hit", "quality"]], on="hit")
        scores = scores_for(
            rows["quality"].to_numpy(),
            rows["kind"].to_numpy(),
            rows["bias"].to_numpy(),
            rows["scale"].to_numpy(),
            rng,
            noise_sd=noise_sd,
            constant=rows["constant"].to_numpy(),
        )
        assignment_ids, item_ids = rows["assignment"].to_numpy(), rows["item"].to_numpy()
        for start in range(0, len(rows), batch_size):
            stop = start + batch_size
            Judgment.objects.bulk_create(
                [
                    Judgment(assignment_id=int(a), item_id=int(i), score=int(s), played=True)
                    for a, i, s in zip(assignment_ids[start:stop], item_ids[start:stop], scores[start:stop])
                ],
                batch_size=batch_size,
            )
            if on_batch:
                on_batch(min(stop, len(rows)), len(rows))
    names = pd.DataFrame({"worker": worker_ids, "external_id": [w.external_id for w in workers], "kind": kinds})
    return CrowdResult(workers=names, judgments=len(rows))
