"""Creating and planning campaigns (services: views, API and commands call these)."""
import secrets

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from annotation_site.corpus.models import DATASET_NAME, Caption, Reference, Sentence, System
from annotation_site.corpus.tokens import tokenize

from . import planning
from .models import HIT, Campaign, Item, ItemType, QCTest

_BATCH = 2000


class CampaignError(ValueError):
    """A campaign cannot be created or planned as asked."""


def default_min_distance(hit_size):
    return max(2, hit_size // 4)


def human_systems(dataset):
    return list(System.objects.filter(dataset=dataset, is_human=True).order_by("position", "name"))


def reference_sets(dataset):
    return list(Reference.objects.filter(video__dataset=dataset).order_by("reference_set")
                .values_list("reference_set", flat=True).distinct())


def human_system_from_references(dataset, reference_set):
    """The human system made of reference set ``reference_set`` of ``dataset``: a System named after the set
    with ``is_human``, one caption per reference (one sentence, whitespace tokens). Created on first use."""
    existing = System.objects.filter(dataset=dataset, name=reference_set).first()
    if existing is not None:
        if not existing.is_human:
            raise CampaignError(f"dataset {dataset.name} has a system named {reference_set!r} that is not human")
        return existing
    references = list(Reference.objects.filter(video__dataset=dataset, reference_set=reference_set)
                      .values_list("video_id", "text"))
    if not references:
        raise CampaignError(f"dataset {dataset.name} has no reference set {reference_set!r}")
    with transaction.atomic():
        last = System.objects.filter(dataset=dataset).aggregate(m=Max("position"))["m"]
        system = System.objects.create(dataset=dataset, name=reference_set, is_human=True,
                                       position=0 if last is None else last + 1,
                                       description=f"Human captions of reference set {reference_set}.")
        captions = Caption.objects.bulk_create(
            [Caption(video_id=video_id, system=system, position=i) for i, (video_id, _) in enumerate(references)],
            batch_size=_BATCH)
        Sentence.objects.bulk_create(
            [Sentence(caption_id=caption.pk, index=0, text=text, tokens=tokenize(text))
             for caption, (_, text) in zip(captions, references) if text.strip()],
            batch_size=_BATCH)
    return system


def create_campaign(*, name, dataset, systems, human_system, description="", hit_size=100, pairs_per_hit=10,
                    repeats_per_hit=10, min_control_distance=None, workers_per_hit=1, seed=None,
                    qc_test=QCTest.WILCOXON, qc_threshold=0.05, qc_min_pairs=10, significance_threshold=0.05):
    """Create campaign ``name`` over ``systems`` of ``dataset`` plus ``human_system``, and plan its HITs."""
    try:
        DATASET_NAME(name)
    except ValidationError as exc:
        raise CampaignError(f"invalid campaign name {name!r}: {exc.messages[0]}") from None
    systems = list(systems)
    if not systems:
        raise CampaignError("choose at least one system to evaluate")
    if human_system is None or not human_system.is_human or human_system.dataset_id != dataset.pk:
        raise CampaignError("the human caption set must be a human system of the campaign's dataset")
    for system in systems:
        if system.dataset_id != dataset.pk:
            raise CampaignError(f"system {system.name} is not part of dataset {dataset.name}")
        if system.pk == human_system.pk:
            raise CampaignError(f"{system.name} is the human caption set; it is added to the campaign hidden")
    if qc_test not in QCTest.values:
        raise CampaignError(f"unknown QC test {qc_test!r}; choose one of {', '.join(QCTest.values)}")
    if not 0 < qc_threshold < 1 or not 0 < significance_threshold < 1:
        raise CampaignError("thresholds must lie between 0 and 1")
    if min_control_distance is None:
        min_control_distance = default_min_distance(hit_size)
    layout = planning.Layout(hit_size=hit_size, pairs_per_hit=pairs_per_hit, repeats_per_hit=repeats_per_hit,
                             min_distance=min_control_distance)
    try:
        layout.validate()
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    if workers_per_hit < 1:
        raise CampaignError("every HIT needs at least one worker")
    with transaction.atomic():
        if Campaign.objects.filter(name=name).exists():
            raise CampaignError(f"a campaign named {name!r} exists already")
        campaign = Campaign.objects.create(
            name=name, description=description, dataset=dataset, human_system=human_system,
            hit_size=hit_size, pairs_per_hit=pairs_per_hit, repeats_per_hit=repeats_per_hit,
            min_control_distance=min_control_distance, workers_per_hit=workers_per_hit,
            seed=secrets.randbits(63) if seed is None else int(seed), qc_test=qc_test, qc_threshold=qc_threshold,
            qc_min_pairs=qc_min_pairs, significance_threshold=significance_threshold)
        campaign.systems.set(systems)
        write_plan(campaign)
    return campaign


def caption_tokens(system_ids, dataset):
    """Caption pk -> whitespace tokens of its paragraph (sentences in order), for ``system_ids`` in ``dataset``."""
    tokens = {}
    rows = (Sentence.objects.filter(caption__system_id__in=system_ids, caption__video__dataset=dataset)
            .order_by("caption_id", "index").values_list("caption_id", "tokens"))
    for caption_id, sentence_tokens in rows:
        tokens.setdefault(caption_id, []).extend(sentence_tokens)
    return tokens


def layout_of(campaign):
    return planning.Layout(hit_size=campaign.hit_size, pairs_per_hit=campaign.pairs_per_hit,
                           repeats_per_hit=campaign.repeats_per_hit, min_distance=campaign.min_control_distance)


def build_plan(campaign):
    """Plan a campaign's HITs from its parameters and seed (pure planning over what the database holds);
    returns (planned HITs, caption tokens)."""
    human_id = campaign.human_system_id
    system_ids = sorted(set(campaign.systems.values_list("pk", flat=True)) | {human_id})
    tokens = caption_tokens(system_ids, campaign.dataset)
    rows = (Caption.objects.filter(system_id__in=system_ids, video__dataset=campaign.dataset)
            .values_list("pk", "video_id", "system_id"))
    system_captions, human = [], {}
    for caption_id, video_id, system_id in rows:
        if not tokens.get(caption_id):
            continue  # an empty caption has nothing to judge
        system_captions.append((caption_id, video_id))
        if system_id == human_id:
            human[video_id] = (caption_id, tokens[caption_id])
    try:
        hits = planning.plan(system_captions, human, layout_of(campaign), np.random.default_rng(campaign.seed))
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    return hits, tokens


def write_plan(campaign):
    """Plan the campaign and write its HITs and items: three bulk inserts and one update."""
    if campaign.hits.exists():
        raise CampaignError(f"campaign {campaign.name} is planned already")
    planned, tokens = build_plan(campaign)
    hits = HIT.objects.bulk_create(
        [HIT(campaign=campaign, number=i + 1, n_items=len(p.items)) for i, p in enumerate(planned)],
        batch_size=_BATCH)

    def make(hit, position, planned_item, control_of_id=None):
        words = planned_item.tokens if planned_item.tokens is not None else tokens[planned_item.caption_id]
        start, end = planned_item.degraded_range or (None, None)
        return Item(hit_id=hit.pk, position=position, item_type=planned_item.item_type,
                    caption_id=planned_item.caption_id, text=" ".join(words), control_of_id=control_of_id,
                    degraded_start=start, degraded_end=end, donor_caption_id=planned_item.donor_caption_id)

    first_types = (ItemType.SYSTEM, ItemType.ORIGINAL)
    firsts = [(hit, pos, item) for hit, p in zip(hits, planned) for pos, item in enumerate(p.items)
              if item.item_type in first_types]
    created = Item.objects.bulk_create([make(hit, pos, item) for hit, pos, item in firsts], batch_size=_BATCH)
    pk_at = {(hit.pk, pos): row.pk for (hit, pos, _), row in zip(firsts, created)}
    Item.objects.bulk_create(
        [make(hit, pos, item, control_of_id=pk_at[(hit.pk, item.partner)])
         for hit, p in zip(hits, planned) for pos, item in enumerate(p.items) if item.item_type not in first_types],
        batch_size=_BATCH)
    degraded = Item.objects.filter(control_of=OuterRef("pk"), item_type=ItemType.DEGRADED).values("pk")[:1]
    Item.objects.filter(hit__campaign=campaign, item_type=ItemType.ORIGINAL).update(control_of=Subquery(degraded))
    Campaign.objects.filter(pk=campaign.pk).update(planned_at=timezone.now())
    campaign.planned_at = timezone.now()
    return hits
