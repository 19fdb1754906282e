"""Creating and planning campaigns (services: views, API and commands call these).

``create_campaign`` is the one path of the form, the API and ``da_plan``: it checks the layout against the
dataset (``check_reach``: a worker must be able to reach the QC minimum of pairs, and the test must be able to
pass with them; the refusal says which values would work), fills the values left out with
``suggested_layout`` (the paper's HIT of 100 when the dataset is large enough, a smaller one that works
otherwise), and writes the plan.
"""

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from annotation_site.corpus.models import Caption, Reference, Sentence, System, check_unit_name
from annotation_site.corpus.tokens import tokenize
from annotation_site.db_statistics import refresh_after_bulk_load
from annotation_site.strict_numbers import column_range

from . import planning
from .models import HIT, WATCH_FRACTION, WATCH_MAX_SECONDS, Campaign, Item, ItemType, QCTest

_BATCH = 2000


class CampaignError(ValueError):
    """A campaign cannot be created or planned as asked. ``suggestions``: changes that would work, each
    ``{"text": plain words, "change": {field: value}}``; ``suggested``: a complete layout that works (field name
    -> value), when one is known."""

    def __init__(self, message, suggestions=(), suggested=None):
        super().__init__(message)
        self.suggestions = list(suggestions)
        self.suggested = suggested


LAYOUT_FIELDS = ("hit_size", "pairs_per_hit", "repeats_per_hit", "min_control_distance", "workers_per_hit")
HIT_SIZE_RANGE = (4, 1000)
MAX_WORKERS_PER_HIT = 1000  # judgments of every caption: a typing slip, not a design, beyond that
MAX_QC_MIN_PAIRS = column_range(Campaign, "qc_min_pairs")[1]
MAX_SEED = 2**63 - 1  # Campaign.seed (BigIntegerField)


@dataclass
class PlanInputs:
    """What planning reads from the database: the captions shown as system items ``(caption_id, video_id)``,
    the human captions ``video_id -> (caption_id, tokens)`` (the source of originals and degraded copies) and
    the tokens of every caption."""

    system_captions: list
    human: dict
    tokens: dict

    @property
    def n_captions(self):
        return len(self.system_captions)

    @property
    def n_degradable(self):
        from .degradation import degradable_length

        return sum(1 for _, tokens in self.human.values() if degradable_length(tokens) > 0)


def default_min_distance(hit_size):
    return max(2, hit_size // 4)


def human_systems(dataset):
    return list(System.objects.filter(dataset=dataset, is_human=True).order_by("position", "name"))


def human_system_from_references(dataset, reference_set):
    """The human system made of reference set ``reference_set`` of ``dataset``: a System named after the set
    with ``is_human``, one caption per reference (one sentence, whitespace tokens). Created on first use."""
    existing = System.objects.filter(dataset=dataset, name=reference_set).first()
    if existing is not None:
        if not existing.is_human:
            raise CampaignError(f"dataset {dataset.name} has a system named {reference_set!r} that is not human")
        if not Sentence.objects.filter(caption__system=existing).exists():  # a judgments import's, before 2026-11-28
            raise CampaignError(
                f"dataset {dataset.name} has a human system named {reference_set!r} whose captions hold no text (a "
                "DA judgments import made it from the name alone): it cannot stand for the reference set; rename "
                "that system in the admin, or plan with another reference set"
            )
        return existing
    references = list(
        Reference.objects.filter(video__dataset=dataset, reference_set=reference_set).values_list("video_id", "text")
    )
    if not references:
        raise CampaignError(f"dataset {dataset.name} has no reference set {reference_set!r}")
    with transaction.atomic():
        last = System.objects.filter(dataset=dataset).aggregate(m=Max("position"))["m"]
        system = System.objects.create(
            dataset=dataset,
            name=reference_set,
            is_human=True,
            position=0 if last is None else last + 1,
            description=f"Human captions of reference set {reference_set}.",
        )
        captions = Caption.objects.bulk_create(
            [Caption(video_id=video_id, system=system, position=i) for i, (video_id, _) in enumerate(references)],
            batch_size=_BATCH,
        )
        Sentence.objects.bulk_create(
            [
                Sentence(caption_id=caption.pk, index=0, text=text, tokens=tokenize(text))
                for caption, (_, text) in zip(captions, references)
                if text.strip()
            ],
            batch_size=_BATCH,
        )
    return system


def plan_inputs(dataset, system_ids, human_id):
    """Load the planning inputs (two queries). The human system's captions are not system items: the hidden
    originals show them and score the human system (docs/direct-assessment.md, "Planning")."""
    ids = sorted(set(system_ids) | {human_id})
    tokens = caption_tokens(ids, dataset)
    rows = (
        Caption.objects.filter(system_id__in=ids, video__dataset=dataset)
        .order_by("pk")
        .values_list("pk", "video_id", "system_id")
    )
    system_captions, human = [], {}
    for caption_id, video_id, system_id in rows:
        if not tokens.get(caption_id):
            continue  # an empty caption has nothing to judge
        if system_id == human_id:
            human[video_id] = (caption_id, tokens[caption_id])
        else:
            system_captions.append((caption_id, video_id))
    return PlanInputs(system_captions=system_captions, human=human, tokens=tokens)


def _needed_pairs(qc_test, qc_threshold, qc_min_pairs):
    test_minimum = planning.pairs_to_pass(qc_test, qc_threshold)
    return max(qc_min_pairs, test_minimum), test_minimum


def _suggestion(inputs, qc_test, qc_threshold, qc_min_pairs):
    """The suggested layout values for these inputs (PlanInputs, or a pair ``(n_captions, n_degradable)``), or
    None when the dataset cannot give any."""
    n_captions, n_degradable = inputs if isinstance(inputs, tuple) else (inputs.n_captions, inputs.n_degradable)
    needed, _ = _needed_pairs(qc_test, qc_threshold, qc_min_pairs)
    try:
        layout, workers = planning.suggest(n_captions, n_degradable, needed)
    except ValueError:
        return None
    return {
        "hit_size": layout.hit_size,
        "pairs_per_hit": layout.pairs_per_hit,
        "repeats_per_hit": layout.repeats_per_hit,
        "min_control_distance": layout.min_distance,
        "workers_per_hit": workers,
    }


def _describe(values):
    repeats = values["repeats_per_hit"]
    return (
        f"{values['hit_size']} items per HIT with {values['pairs_per_hit']} pairs and "
        f"{repeats} repeat{'s' if repeats != 1 else ''}, controls at least {values['min_control_distance']} "
        f"apart, {values['workers_per_hit']} workers per HIT"
    )


def check_reach(layout, inputs, *, qc_test=QCTest.WILCOXON, qc_threshold=0.05, qc_min_pairs=10):
    """Refuse (CampaignError, with the values that would work) a layout in which no worker can reach the QC
    minimum of pairs: a worker does each HIT at most once, so over the whole plan they rate at most
    ``pairs_per_hit x HITs`` pairs; and fewer pairs than the QC test needs to reach p < threshold at all (5 for
    the one-sided Wilcoxon test at 0.05) can never pass either. Returns the planning.Reach."""
    needed, test_minimum = _needed_pairs(qc_test, qc_threshold, qc_min_pairs)
    suggested = _suggestion(inputs, qc_test, qc_threshold, qc_min_pairs)
    tail = f" Suggested for this dataset: {_describe(suggested)}." if suggested else ""
    if inputs.n_captions == 0:
        raise CampaignError("the chosen systems have no captions to judge")
    if inputs.n_degradable < layout.pairs_per_hit:
        raise CampaignError(
            f"{inputs.n_degradable} human captions can be degraded (3 words or more), but a HIT needs "
            f"{layout.pairs_per_hit} originals: choose at most {inputs.n_degradable} pairs per HIT.{tail}",
            suggestions=[
                {
                    "text": f"at most {inputs.n_degradable} original/degraded pairs per HIT",
                    "change": {"pairs_per_hit": inputs.n_degradable},
                }
            ],
            suggested=suggested,
        )
    result = planning.reach(layout, inputs.n_captions, needed)
    if result.ok:
        return result
    why = (
        f"the QC minimum is {qc_min_pairs} pairs"
        if qc_min_pairs >= test_minimum
        else f"the QC minimum is {qc_min_pairs} pairs, but the {qc_test} test cannot reach p < {qc_threshold:g} "
        f"with fewer than {test_minimum}"
    )
    options = planning.alternatives(layout, inputs.n_captions, inputs.n_degradable, needed, qc_min_pairs, test_minimum)
    texts = [text for text, _ in options]
    raise CampaignError(
        f"No worker can reach the pairs quality control needs: {why}, and with {layout.pairs_per_hit} pairs per HIT "
        f"and {result.n_hits} HIT{'s' if result.n_hits != 1 else ''} ({inputs.n_captions} system captions, "
        f"{layout.system_slots} system slots per HIT) a worker who does every HIT rates at most "
        f"{result.reachable_pairs}. Values that would work: {'; or '.join(texts) if texts else 'none by one change'}."
        f"{tail}",
        suggestions=[{"text": text, "change": change} for text, change in options],
        suggested=suggested,
    )


def _check_qc(qc_test, qc_threshold, qc_min_pairs):
    """Refuse (CampaignError) quality-control parameters no campaign can use."""
    if qc_test not in QCTest.values:
        raise CampaignError(f"unknown QC test {qc_test!r}; choose one of {', '.join(QCTest.values)}")
    if not 0 < qc_threshold < 1:
        raise CampaignError("thresholds must lie between 0 and 1")
    if not 1 <= qc_min_pairs <= MAX_QC_MIN_PAIRS:
        raise CampaignError(f"the QC minimum of pairs must be from 1 to {MAX_QC_MIN_PAIRS}, not {qc_min_pairs}")


def change_qc(campaign, *, qc_test=None, qc_threshold=None, qc_min_pairs=None):
    """Change a campaign's quality-control parameters (None: unchanged), checked as when it was created: for a
    planned campaign the QC minimum must stay within reach (a worker does each HIT at most once, so rates at most
    ``pairs_per_hit x HITs`` pairs) and the test must be able to pass with it; else CampaignError, nothing
    changed. The campaign's default crowd entry study is raised to the HITs per participant QC then needs.
    Returns the campaign as stored."""
    values = {
        "qc_test": campaign.qc_test if qc_test is None else qc_test,
        "qc_threshold": campaign.qc_threshold if qc_threshold is None else qc_threshold,
        "qc_min_pairs": campaign.qc_min_pairs if qc_min_pairs is None else qc_min_pairs,
    }
    _check_qc(**values)
    if campaign.source == Campaign.Source.PLANNED:
        needed, test_minimum = _needed_pairs(values["qc_test"], values["qc_threshold"], values["qc_min_pairs"])
        n_hits = campaign.hits.count()
        reachable = campaign.pairs_per_hit * n_hits
        if needed > reachable:
            why = (
                f"the {values['qc_test']} test cannot reach p < {values['qc_threshold']:g} with fewer than "
                f"{test_minimum} pairs"
                if test_minimum > values["qc_min_pairs"]
                else f"the QC minimum would be {values['qc_min_pairs']} pairs"
            )
            raise CampaignError(
                f"No worker could pass quality control: {why}, and a worker who does all {n_hits} HITs of "
                f"{campaign.name} rates at most {reachable} original/degraded pairs ({campaign.pairs_per_hit} per "
                "HIT). Nothing was changed."
            )
    Campaign.objects.filter(pk=campaign.pk).update(**values)
    campaign.refresh_from_db()
    from annotation_site.crowd.hooks import sync_default_entry

    sync_default_entry("da", campaign.pk)  # its entry link lets a worker do the HITs QC now needs
    return campaign


def plan_summary(campaign):
    """One sentence on what a campaign's layout asks of its workers (``da_plan`` prints it after planning)."""
    repeats = f"{campaign.repeats_per_hit} repeat{'s' if campaign.repeats_per_hit != 1 else ''}"
    return (
        f"Layout: {campaign.hit_size} items per HIT, {campaign.pairs_per_hit} original/degraded pairs, "
        f"{repeats}, {campaign.workers_per_hit} workers per HIT; {_workload(campaign)}."
    )


def plan_workload(campaign):
    """What the layout asks of one worker, without the layout itself: the campaign page states the layout in full
    and adds this sentence (the page said "Layout:" twice when it showed ``plan_summary`` too)."""
    workload = _workload(campaign)
    return f"{workload[0].upper()}{workload[1:]}."


def hits_per_worker(campaign):
    """``(HITs one worker must complete to reach the pairs quality control needs, those pairs)``: the figure the
    campaign page states ("a worker needs 3 HITs (of 3) ..."), and the HITs per participant of the campaign's
    default crowd entry study (``crowd_hits_per_participant``)."""
    needed, _ = _needed_pairs(campaign.qc_test, campaign.qc_threshold, campaign.qc_min_pairs)
    return -(-needed // max(1, campaign.pairs_per_hit)), needed


def crowd_hits_per_participant(campaign):
    """The HITs one crowd participant must be allowed (``Study.hits_per_participant``) for quality control to
    judge them: ``hits_per_worker``, at most the campaign's HITs (a worker does each HIT once) and at least 1."""
    per_worker, _ = hits_per_worker(campaign)
    n_hits = campaign.hits.count()
    return max(1, min(per_worker, n_hits) if n_hits else per_worker)


def _workload(campaign):
    n_hits = campaign.hits.count()
    per_worker, needed = hits_per_worker(campaign)
    return (
        f"a worker needs {per_worker} HIT{'s' if per_worker != 1 else ''} (of {n_hits}) to reach the {needed} "
        "pairs quality control needs"
    )


def suggested_layout(
    dataset,
    systems,
    *,
    human_system=None,
    reference_set=None,
    qc_test=QCTest.WILCOXON,
    qc_threshold=0.05,
    qc_min_pairs=10,
):
    """The layout values (``LAYOUT_FIELDS``) that work for these systems and a human caption set (a human
    system, or a reference set not made into one yet: nothing is written), or None when the dataset cannot
    support a campaign. What the campaign form shows as its defaults."""
    from .degradation import degradable_length

    system_ids = [s.pk for s in systems if human_system is None or s.pk != human_system.pk]
    tokens = caption_tokens(system_ids, dataset)
    n_captions = sum(1 for caption_tokens_ in tokens.values() if caption_tokens_)
    if human_system is not None:
        human_tokens = caption_tokens([human_system.pk], dataset).values()
    else:
        human_tokens = [
            tokenize(text)
            for text in Reference.objects.filter(video__dataset=dataset, reference_set=reference_set).values_list(
                "text", flat=True
            )
        ]
    n_degradable = sum(1 for t in human_tokens if degradable_length(t) > 0)
    return _suggestion((n_captions, n_degradable), qc_test, qc_threshold, qc_min_pairs)


def create_campaign(
    *,
    name,
    dataset,
    systems,
    human_system,
    description="",
    hit_size=None,
    pairs_per_hit=None,
    repeats_per_hit=None,
    min_control_distance=None,
    workers_per_hit=None,
    seed=None,
    qc_test=QCTest.WILCOXON,
    qc_threshold=0.05,
    qc_min_pairs=10,
    significance_threshold=0.05,
    watch_fraction=None,
    watch_max_seconds=None,
):
    """Create campaign ``name`` over ``systems`` of ``dataset`` plus ``human_system``, and plan its HITs.
    Layout values left as None are taken from ``suggested_layout`` (with ``min_control_distance`` a quarter of
    the HIT when the HIT size is given); the layout is refused when no worker could reach the QC minimum."""
    try:
        check_unit_name(name)
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
    _check_qc(qc_test, qc_threshold, qc_min_pairs)
    if not 0 < significance_threshold < 1:
        raise CampaignError("thresholds must lie between 0 and 1")
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise CampaignError(f"the seed must be a whole number from 0 to {MAX_SEED}")
    if hit_size is not None and not HIT_SIZE_RANGE[0] <= hit_size <= HIT_SIZE_RANGE[1]:
        raise CampaignError(f"a HIT has from {HIT_SIZE_RANGE[0]} to {HIT_SIZE_RANGE[1]} items, not {hit_size}")
    watch = {
        "watch_fraction": WATCH_FRACTION if watch_fraction is None else float(watch_fraction),
        "watch_max_seconds": WATCH_MAX_SECONDS if watch_max_seconds is None else float(watch_max_seconds),
    }
    if not 0 <= watch["watch_fraction"] <= 1 or not watch["watch_max_seconds"] >= 0:
        raise CampaignError("the watch share must lie between 0 and 1 and the watch cap must not be negative")
    inputs = plan_inputs(dataset, [s.pk for s in systems], human_system.pk)
    given = {"hit_size": hit_size, "pairs_per_hit": pairs_per_hit, "repeats_per_hit": repeats_per_hit}
    if any(value is None for value in given.values()):
        suggested = _suggestion(inputs, qc_test, qc_threshold, qc_min_pairs) or {
            "hit_size": 100,
            "pairs_per_hit": 10,
            "repeats_per_hit": 10,
            "min_control_distance": 25,
        }
        if hit_size is None and min_control_distance is None:
            min_control_distance = suggested["min_control_distance"]
        given = {key: suggested[key] if value is None else value for key, value in given.items()}
    hit_size, pairs_per_hit, repeats_per_hit = given["hit_size"], given["pairs_per_hit"], given["repeats_per_hit"]
    if min_control_distance is None:
        min_control_distance = default_min_distance(hit_size)
    layout = planning.Layout(
        hit_size=hit_size,
        pairs_per_hit=pairs_per_hit,
        repeats_per_hit=repeats_per_hit,
        min_distance=min_control_distance,
    )
    try:
        layout.validate()
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    if workers_per_hit is not None and not 1 <= workers_per_hit <= MAX_WORKERS_PER_HIT:
        raise CampaignError(f"every HIT needs from 1 to {MAX_WORKERS_PER_HIT} workers, not {workers_per_hit}")
    reach = check_reach(layout, inputs, qc_test=qc_test, qc_threshold=qc_threshold, qc_min_pairs=qc_min_pairs)
    if workers_per_hit is None:
        workers_per_hit = planning.default_workers_per_hit(reach.hits_per_worker)
    with transaction.atomic():
        if Campaign.objects.filter(name=name).exists():
            raise CampaignError(f"a campaign named {name!r} exists already")
        campaign = Campaign.objects.create(
            name=name,
            description=description,
            dataset=dataset,
            human_system=human_system,
            hit_size=hit_size,
            pairs_per_hit=pairs_per_hit,
            repeats_per_hit=repeats_per_hit,
            min_control_distance=min_control_distance,
            workers_per_hit=workers_per_hit,
            seed=secrets.randbits(63) if seed is None else int(seed),
            qc_test=qc_test,
            qc_threshold=qc_threshold,
            qc_min_pairs=qc_min_pairs,
            significance_threshold=significance_threshold,
            **watch,
        )
        campaign.systems.set(systems)
        write_plan(campaign, inputs)
    return campaign


def create_campaign_by_names(
    *,
    name: str,
    dataset: str,
    systems: Sequence[str] | None = None,
    human_system: str | None = None,
    reference_set: str | None = None,
    **options: Any,
) -> Campaign:
    """``create_campaign`` from names, the one path of the API, the campaign form and ``da_plan``: ``dataset`` is a
    dataset name, ``systems`` system names in the order given (default: every non-human system of the dataset
    except the human one, in the dataset's order), and the human caption set either ``human_system`` (a system
    name) or ``reference_set`` (made into a human system on first use). ``options`` are ``create_campaign``'s
    (layout, seed, QC, watch gate, description; None means "suggested"). Raises CampaignError."""
    from annotation_site.corpus.models import Dataset

    found = Dataset.objects.filter(name=dataset).first()
    if found is None:
        raise CampaignError(f"no dataset named {dataset!r}")
    if bool(human_system) == bool(reference_set):
        raise CampaignError("give either a human system or a reference set")
    if reference_set:
        human = human_system_from_references(found, reference_set)
    else:
        human = System.objects.filter(dataset=found, name=human_system).first()
        if human is None:
            raise CampaignError(f"dataset {found.name} has no system {human_system!r}")
    if systems:
        known = {s.name: s for s in System.objects.filter(dataset=found, name__in=systems)}
        unknown = [n for n in systems if n not in known]
        if unknown:
            raise CampaignError(f"dataset {found.name} has no system {', '.join(unknown)}")
        chosen = [known[n] for n in dict.fromkeys(systems)]
    else:
        chosen = list(
            System.objects.filter(dataset=found, is_human=False).exclude(pk=human.pk).order_by("position", "name")
        )
    options = {key: value for key, value in options.items() if value is not None}
    return create_campaign(name=name, dataset=found, systems=chosen, human_system=human, **options)


def caption_tokens(system_ids, dataset):
    """Caption pk -> whitespace tokens of its paragraph (sentences in order), for ``system_ids`` in ``dataset``."""
    tokens: dict[int, list[str]] = {}
    rows = (
        Sentence.objects.filter(caption__system_id__in=system_ids, caption__video__dataset=dataset)
        .order_by("caption_id", "index")
        .values_list("caption_id", "tokens")
    )
    for caption_id, sentence_tokens in rows:
        tokens.setdefault(caption_id, []).extend(sentence_tokens)
    return tokens


def layout_of(campaign):
    return planning.Layout(
        hit_size=campaign.hit_size,
        pairs_per_hit=campaign.pairs_per_hit,
        repeats_per_hit=campaign.repeats_per_hit,
        min_distance=campaign.min_control_distance,
    )


def build_plan(campaign, inputs=None):
    """Plan a campaign's HITs from its parameters and seed (pure planning over what the database holds, or
    over ``inputs`` already loaded); returns (planned HITs, caption tokens)."""
    if inputs is None:
        inputs = plan_inputs(campaign.dataset, campaign.systems.values_list("pk", flat=True), campaign.human_system_id)
    try:
        hits = planning.plan(
            inputs.system_captions, inputs.human, layout_of(campaign), np.random.default_rng(campaign.seed)
        )
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    return hits, inputs.tokens


def write_plan(campaign, inputs=None):
    """Plan the campaign and write its HITs and items: three bulk inserts and one update."""
    if campaign.hits.exists():
        raise CampaignError(f"campaign {campaign.name} is planned already")
    planned, tokens = build_plan(campaign, inputs)
    hits = HIT.objects.bulk_create(
        [HIT(campaign=campaign, number=i + 1, n_items=len(p.items)) for i, p in enumerate(planned)], batch_size=_BATCH
    )

    def make(hit, position, planned_item, control_of_id=None):
        words = planned_item.tokens if planned_item.tokens is not None else tokens[planned_item.caption_id]
        start, end = planned_item.degraded_range or (None, None)
        return Item(
            hit_id=hit.pk,
            position=position,
            item_type=planned_item.item_type,
            caption_id=planned_item.caption_id,
            text=" ".join(words),
            control_of_id=control_of_id,
            degraded_start=start,
            degraded_end=end,
            donor_caption_id=planned_item.donor_caption_id,
        )

    first_types = (ItemType.SYSTEM, ItemType.ORIGINAL)
    firsts = [
        (hit, pos, item)
        for hit, p in zip(hits, planned)
        for pos, item in enumerate(p.items)
        if item.item_type in first_types
    ]
    created = Item.objects.bulk_create([make(hit, pos, item) for hit, pos, item in firsts], batch_size=_BATCH)
    pk_at = {(hit.pk, pos): row.pk for (hit, pos, _), row in zip(firsts, created)}
    Item.objects.bulk_create(
        [
            make(hit, pos, item, control_of_id=pk_at[(hit.pk, item.partner)])
            for hit, p in zip(hits, planned)
            for pos, item in enumerate(p.items)
            if item.item_type not in first_types
        ],
        batch_size=_BATCH,
    )
    degraded = Item.objects.filter(control_of=OuterRef("pk"), item_type=ItemType.DEGRADED).values("pk")[:1]
    Item.objects.filter(hit__campaign=campaign, item_type=ItemType.ORIGINAL).update(control_of=Subquery(degraded))
    Campaign.objects.filter(pk=campaign.pk).update(planned_at=timezone.now())
    campaign.planned_at = timezone.now()
    refresh_after_bulk_load(HIT, Item)
    return hits
