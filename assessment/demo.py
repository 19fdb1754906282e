"""The Direct Assessment part of the demo (a demo step, run by ``annotation_site.demo``): campaign ``demo-da`` over the
demo dataset's systems with its reference set as the hidden human caption set, planned with the suggested
layout (the same defaults as ``da_plan``), and rated by a simulated crowd (``simulation.py``): diligent workers
and one random clicker, each doing every HIT, so the page shows QC, a ranking with the human system on it and
the win matrix."""

from annotation_site.corpus.models import Reference, System

from . import campaigns, services
from .analysis import analyse
from .models import Campaign, Worker
from .simulation import simulate_campaign

CAMPAIGN = "demo-da"
WORKER_PREFIX = "demo-da-sim"
SEED = 2018
QUALITY = {"ClipTrans": 78.0, "FrameLSTM": 55.0, "RetrievalBaseline": 25.0}  # 0-100; others get 50
HUMAN_QUALITY = 88.0


def add_campaign(dataset, progress=None):
    reference_set = (
        Reference.objects.filter(video__dataset=dataset)
        .order_by("reference_set")
        .values_list("reference_set", flat=True)
        .first()
    )
    if reference_set is None:
        return "skipped: the dataset has no reference captions to serve as the hidden human system"
    Campaign.objects.filter(name=CAMPAIGN).delete()  # one left from an earlier demo on another dataset
    Worker.objects.filter(external_id__startswith=f"{WORKER_PREFIX}-", source="simulation").delete()
    try:
        human = campaigns.human_system_from_references(dataset, reference_set)
        campaign = campaigns.create_campaign(
            name=CAMPAIGN,
            dataset=dataset,
            human_system=human,
            seed=SEED,
            systems=list(System.objects.filter(dataset=dataset, is_human=False)),
            description="Demo: rated by a simulated crowd (diligent workers and one random clicker). Plan your own "
            "with “New campaign”, or rate it yourself from the workers' links.",
        )
    except campaigns.CampaignError as exc:
        return f"skipped: {exc}"
    n_hits = campaign.hits.count()
    diligent = max(1, campaign.workers_per_hit - 1)
    quality = {name: QUALITY.get(name, 50.0) for name in campaign.systems.values_list("name", flat=True)}
    quality[human.name] = HUMAN_QUALITY
    simulate_campaign(
        campaign,
        {"diligent": diligent, "random": campaign.workers_per_hit - diligent},
        quality,
        seed=SEED,
        hits_per_worker=n_hits,
        prefix=WORKER_PREFIX,
    )
    services.store_qc(campaign)  # the record a finished HIT leaves (the QC task after each completed HIT)
    result = analyse(campaign)
    ranking = ", ".join(
        f"{row.system}{' (human)' if row.is_human else ''} {row.z:+.2f}" for row in result.systems.itertuples()
    )
    return (
        f"campaign {CAMPAIGN!r}: {n_hits} HITs x {campaign.workers_per_hit} simulated workers, "
        f"{result.parameters['n_workers_passed']} of {result.parameters['n_workers']} pass QC; z: {ranking}"
    )
