"""Planning HITs: layout, distances between control items and partners, determinism by seed, and the plan as
written to the database by the campaign service."""

from collections import Counter

import numpy as np
import pytest

from assessment import campaigns, planning
from assessment.models import HIT, Item

from .conftest import make_dataset, small_campaign


def synthetic_inputs(n_videos=300, n_systems=7, seed=0):
    """Captions (caption id, video id) of n_systems systems (the last is human) and the human captions."""
    rng = np.random.default_rng(seed)
    captions, human = [], {}
    for video in range(n_videos):
        for system in range(n_systems):
            caption_id = video * 100 + system
            captions.append((caption_id, video))
            if system == n_systems - 1:
                human[video] = (caption_id, [f"w{video}_{i}" for i in range(int(rng.integers(3, 30)))])
    return captions, human


def check_hit(hit, layout, human):
    items = hit.items
    types = Counter(item.item_type for item in items)
    assert types["original"] == layout.pairs_per_hit
    assert types["degraded"] == layout.pairs_per_hit
    assert types["repeat"] == layout.repeats_per_hit
    assert types["system"] == layout.system_slots
    assert len(items) == layout.hit_size
    for position, item in enumerate(items):
        if item.item_type == "system":
            assert item.partner is None
            continue
        partner = items[item.partner]
        assert partner.partner == position or item.item_type == "repeat"
        distance = abs(item.partner - position)
        assert distance >= layout.min_distance, f"control at {position} only {distance} from its partner"
        assert distance > 1  # never next to it
        if item.item_type == "repeat":
            assert partner.item_type == "system" and partner.caption_id == item.caption_id
            assert item.partner < position  # a repeat comes after the item it repeats
        if item.item_type == "degraded":
            assert partner.item_type == "original" and partner.caption_id == item.caption_id
            original_tokens = next(t for c, t in human.values() if c == item.caption_id)
            start, end = item.degraded_range
            assert item.tokens[:start] == original_tokens[:start] and item.tokens[end:] == original_tokens[end:]
            assert item.tokens[start:end] != original_tokens[start:end]
            assert 0 < start < end < len(original_tokens)


def test_default_layout_of_100_items():
    captions, human = synthetic_inputs()
    layout = planning.Layout()  # 100 items: 10 pairs, 10 repeats, controls at least 25 apart
    hits = planning.plan(captions, human, layout, np.random.default_rng(1))
    assert len(hits) == int(np.ceil(len(captions) / layout.system_slots))
    for hit in hits:
        check_hit(hit, layout, human)
    planned = Counter(item.caption_id for hit in hits for item in hit.items if item.item_type == "system")
    assert set(planned) == {c for c, _ in captions}  # every caption is judged, the human system's too
    overfilled = sum(n - 1 for n in planned.values())
    assert overfilled == len(hits) * layout.system_slots - len(captions)  # only the last HIT is filled up


@pytest.mark.parametrize(
    "layout",
    [
        planning.Layout(hit_size=20, pairs_per_hit=3, repeats_per_hit=2, min_distance=5),
        planning.Layout(hit_size=40, pairs_per_hit=10, repeats_per_hit=0, min_distance=20),
        planning.Layout(hit_size=100, pairs_per_hit=12, repeats_per_hit=20, min_distance=50),
        planning.Layout(hit_size=30, pairs_per_hit=12, repeats_per_hit=3, min_distance=15),
    ],
)
def test_constraints_hold_for_other_layouts(layout):
    captions, human = synthetic_inputs(n_videos=40)
    for seed in range(5):
        for hit in planning.plan(captions, human, layout, np.random.default_rng(seed)):
            check_hit(hit, layout, human)


def test_originals_come_from_videos_not_otherwise_in_the_hit():
    captions, human = synthetic_inputs()
    video_of = dict(captions)
    for hit in planning.plan(captions, human, planning.Layout(), np.random.default_rng(3)):
        shown = {video_of[i.caption_id] for i in hit.items if i.item_type == "system"}
        originals = {video_of[i.caption_id] for i in hit.items if i.item_type == "original"}
        assert not shown & originals


def test_same_seed_same_plan_other_seed_other_plan():
    captions, human = synthetic_inputs()

    def flat(seed):
        hits = planning.plan(captions, human, planning.Layout(), np.random.default_rng(seed))
        return [
            (i.item_type, i.caption_id, i.partner, tuple(i.tokens or ()), i.degraded_range)
            for h in hits
            for i in h.items
        ]

    assert flat(42) == flat(42)
    assert flat(42) != flat(43)


def test_place_pairs_keeps_the_distance_and_the_order():
    rng = np.random.default_rng(0)
    for _ in range(200):
        ordered = list(rng.random(20) < 0.5)
        placed = planning.place_pairs(100, ordered, 25, rng)
        positions = [p for pair in placed for p in pair]
        assert len(set(positions)) == 40
        for (a, b), keep in zip(placed, ordered):
            assert abs(a - b) >= 25
            if keep:
                assert a < b


def test_place_pairs_at_the_limit_falls_back_to_the_half_shift():
    # 50 pairs in 100 positions at distance 50: only the half-shift layout exists
    placed = planning.place_pairs(100, [True] * 50, 50, np.random.default_rng(0), attempts=3)
    assert sorted(p for pair in placed for p in pair) == list(range(100))
    assert all(b - a == 50 for a, b in placed)


@pytest.mark.parametrize(
    "layout,message",
    [
        (planning.Layout(hit_size=20, pairs_per_hit=8, repeats_per_hit=4), "system slots"),
        (planning.Layout(hit_size=100, min_distance=1), "at least 2"),
        (planning.Layout(hit_size=100, min_distance=51), "cannot be kept"),
        (planning.Layout(pairs_per_hit=0), "at least one"),
    ],
)
def test_impossible_layouts_are_refused(layout, message):
    with pytest.raises(ValueError, match=message):
        layout.validate()


def test_too_few_degradable_human_captions_is_refused():
    captions, human = synthetic_inputs(n_videos=12)
    with pytest.raises(ValueError, match="can be degraded"):
        planning.plan(captions, human, planning.Layout(pairs_per_hit=13), np.random.default_rng(0))


def test_small_campaign_gets_one_shorter_hit():
    captions, human = synthetic_inputs(n_videos=3, n_systems=2)  # 6 captions, 3 human
    layout = planning.Layout(hit_size=100, pairs_per_hit=2, repeats_per_hit=2, min_distance=25)
    hits = planning.plan(captions, human, layout, np.random.default_rng(0))
    assert len(hits) == 1
    assert len(hits[0].items) == 6 + 2 * 2 + 2


def test_the_written_plan_is_the_plan_of_its_seed(db):
    dataset = make_dataset("plan-db", n_videos=25)
    campaign = small_campaign(dataset, "plan-db", seed=99)
    assert campaign.seed == 99 and campaign.planned_at is not None
    stored = list(
        Item.objects.filter(hit__campaign=campaign)
        .order_by("hit__number", "position")
        .values_list("item_type", "caption_id", "text", "degraded_start", "degraded_end", "control_of__position")
    )
    planned, tokens = campaigns.build_plan(campaign)
    replanned = [
        (
            i.item_type,
            i.caption_id,
            " ".join(i.tokens or tokens[i.caption_id]),
            *(i.degraded_range or (None, None)),
            i.partner,
        )
        for h in planned
        for i in h.items
    ]
    assert stored == replanned
    # control_of links both ways for original/degraded; repeats point at the system item
    for item in Item.objects.filter(hit__campaign=campaign).exclude(item_type="system").select_related("control_of"):
        assert item.control_of.hit_id == item.hit_id
        if item.item_type in ("original", "degraded"):
            assert item.control_of.control_of_id == item.pk
    assert all(h.n_items == 20 for h in HIT.objects.filter(campaign=campaign))
    degraded = Item.objects.filter(hit__campaign=campaign, item_type="degraded").first()
    assert degraded.donor_caption.system.is_human and degraded.donor_caption.video_id != degraded.caption.video_id


def test_campaign_from_a_reference_set(db):
    dataset = make_dataset("plan-refs", n_videos=15, human=None, references="gt_1")
    human = campaigns.human_system_from_references(dataset, "gt_1")
    assert human.is_human and human.captions.count() == 15
    assert campaigns.human_system_from_references(dataset, "gt_1") == human  # made once
    campaign = campaigns.create_campaign(
        name="refs",
        dataset=dataset,
        systems=dataset.systems.filter(is_human=False),
        human_system=human,
        hit_size=20,
        pairs_per_hit=3,
        repeats_per_hit=2,
        min_control_distance=5,
        seed=1,
    )
    originals = Item.objects.filter(hit__campaign=campaign, item_type="original").select_related("caption__video")
    for item in originals:
        assert item.text == item.caption.video.references.get(reference_set="gt_1").text


@pytest.mark.parametrize(
    "change,message",
    [
        ({"name": "bad name!"}, "invalid campaign name"),
        ({"systems": []}, "at least one system"),
        ({"hit_size": 8}, "system slots"),
        ({"qc_test": "chi2"}, "unknown QC test"),
    ],
)
def test_invalid_campaigns_are_refused_and_nothing_is_written(db, change, message):
    dataset = make_dataset("plan-bad", n_videos=10)
    options = dict(
        name="ok",
        dataset=dataset,
        systems=list(dataset.systems.filter(is_human=False)),
        human_system=dataset.systems.get(is_human=True),
        hit_size=20,
        pairs_per_hit=3,
        repeats_per_hit=2,
        min_control_distance=5,
    )
    options.update(change)
    with pytest.raises(campaigns.CampaignError, match=message):
        campaigns.create_campaign(**options)
    assert not HIT.objects.exists()
