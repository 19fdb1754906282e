"""Campaigns that can produce valid results (issue #9, item 2): planning refuses a layout in which no worker can
reach the QC minimum of pairs (the form, the API and da_plan share one check) and says which values would work;
the defaults are suggested from the dataset; the human captions are the hidden originals, spread evenly."""

import io
from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient
from scipy import stats

from annotation_site.corpus.models import System
from assessment import campaigns, planning
from assessment.models import HIT, Campaign, Item

from .conftest import make_dataset

# The example: 2 pairs per HIT, a QC minimum of 10 and a single HIT.
TOO_FEW = {"hit_size": 40, "pairs_per_hit": 2, "repeats_per_hit": 2, "min_control_distance": 5, "qc_min_pairs": 10}


@pytest.fixture
def small_dataset(db):
    return make_dataset("reach", n_videos=8, systems=("Alpha", "Beta"))  # 16 system captions: one HIT of 40


def _options(dataset, **overrides):
    return {
        "name": "reach-run",
        "dataset": dataset,
        "human_system": dataset.systems.get(is_human=True),
        "systems": list(dataset.systems.filter(is_human=False)),
        **overrides,
    }


def test_the_service_refuses_a_layout_no_worker_can_pass_and_says_what_works(small_dataset):
    with pytest.raises(campaigns.CampaignError) as refused:
        campaigns.create_campaign(**_options(small_dataset, **TOO_FEW))
    message = str(refused.value)
    assert "No worker can reach" in message and "the QC minimum is 10 pairs" in message
    assert "rates at most 2" in message
    assert refused.value.suggestions and "Values that would work" in message
    assert not Campaign.objects.exists() and not HIT.objects.exists()
    # every suggestion, tried, is accepted
    for n, suggestion in enumerate(refused.value.suggestions):
        assert suggestion["text"] in message
        campaign = campaigns.create_campaign(
            **_options(small_dataset, **{**TOO_FEW, **suggestion["change"], "name": f"ok-{n}"})
        )
        assert campaign.hits.exists()
    assert "hit_size" in {key for s in refused.value.suggestions for key in s["change"]}
    suggested = refused.value.suggested
    campaign = campaigns.create_campaign(**_options(small_dataset, name="ok-suggested", **suggested))
    assert campaign.hits.count() * campaign.pairs_per_hit >= campaign.qc_min_pairs


def test_too_few_pairs_for_the_test_to_pass_is_refused_too(small_dataset):
    # 3 pairs per HIT and 1 HIT: a QC minimum of 3 is reachable, but the one-sided Wilcoxon test cannot reach
    # p < 0.05 with 3 pairs (its smallest p is 1/8), so nobody could ever pass
    with pytest.raises(campaigns.CampaignError, match="cannot reach p < 0.05 with fewer than 5"):
        campaigns.create_campaign(
            **_options(small_dataset, hit_size=40, pairs_per_hit=3, repeats_per_hit=2, qc_min_pairs=3)
        )


@pytest.mark.parametrize(
    "test,function",
    [
        ("wilcoxon", lambda x, y: stats.wilcoxon(x, y, alternative="greater").pvalue),
        ("mann_whitney", lambda x, y: stats.mannwhitneyu(x, y, alternative="greater").pvalue),
        ("paired_t", lambda x, y: stats.ttest_rel(x, y, alternative="greater").pvalue),
    ],
)
@pytest.mark.parametrize("threshold", [0.05, 0.01])
def test_pairs_to_pass_is_the_smallest_sample_scipy_lets_pass(test, function, threshold):
    n = planning.pairs_to_pass(test, threshold)

    def best_p(k):  # the strongest evidence k pairs can give: every original far above its degraded copy
        with np.errstate(all="ignore"):
            return function(100.0 + np.arange(k) * 3, np.zeros(k)) if k > 1 or test != "paired_t" else np.nan

    assert best_p(n) < threshold
    assert not best_p(n - 1) < threshold
    assert {("wilcoxon", 0.05): 5, ("mann_whitney", 0.05): 3, ("paired_t", 0.05): 2}.get((test, threshold), n) == n


def test_form_api_and_command_give_the_same_refusal(small_dataset, staff_client, staff_user):
    expected = None
    with pytest.raises(campaigns.CampaignError) as refused:
        campaigns.create_campaign(**_options(small_dataset, **TOO_FEW))
    expected = str(refused.value)

    page = staff_client.post(
        "/da/campaigns/new/",
        {
            "dataset": "reach",
            "name": "from-form",
            "systems": ["Alpha", "Beta"],
            "human": "system:human",
            "qc_test": "wilcoxon",
            "qc_threshold": 0.05,
            **TOO_FEW,
        },
    ).content.decode()
    from django.utils.html import escape

    assert escape(expected) in page

    api = APIClient()
    api.force_authenticate(staff_user)
    response = api.post(
        "/api/da/campaigns/",
        {"name": "from-api", "dataset": "reach", "human_system": "human", **TOO_FEW},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == expected and body["suggestions"] == refused.value.suggestions
    assert body["suggested"] == refused.value.suggested

    with pytest.raises(CommandError) as command:
        call_command(
            "da_plan",
            campaign="from-cli",
            dataset="reach",
            human_system="human",
            hit_size=40,
            pairs=2,
            repeats=2,
            min_distance=5,
            qc_min_pairs=10,
        )
    assert str(command.value) == expected
    assert not Campaign.objects.exists()


def _demo_like(name="tiny"):
    """The shape of the demo dataset: 4 videos, 3 systems, a reference set of paragraph captions."""
    return make_dataset(name, n_videos=4, human=None, references="gt_tiny", sentences=3)


def test_defaults_work_on_a_dataset_as_small_as_the_demo(db, staff_client):
    _demo_like()
    out = io.StringIO()
    call_command("da_plan", campaign="tiny-da", dataset="tiny", reference_set="gt_tiny", seed=1, stdout=out)
    campaign = Campaign.objects.get(name="tiny-da")
    n_hits = campaign.hits.count()
    assert campaign.pairs_per_hit * n_hits >= max(campaign.qc_min_pairs, planning.pairs_to_pass("wilcoxon", 0.05))
    assert (
        campaign.workers_per_hit >= 3
        and campaign.workers_per_hit % -(-campaign.qc_min_pairs // campaign.pairs_per_hit) == 0
    )
    assert "a worker needs" in out.getvalue()
    # the form shows working defaults for the same dataset (the reference set is a human system now) and
    # accepts them as they are
    form = staff_client.get("/da/campaigns/new/?dataset=tiny").content.decode()
    values = {}
    for field in ("hit_size", "pairs_per_hit", "repeats_per_hit", "workers_per_hit", "min_control_distance"):
        values[field] = int(__import__("re").search(rf'name="{field}" value="(\d+)"', form).group(1))
    response = staff_client.post(
        "/da/campaigns/new/",
        {
            "dataset": "tiny",
            "name": "tiny-form",
            "systems": ["Alpha", "Beta", "Gamma"],
            "human": "system:gt_tiny",
            "qc_test": "wilcoxon",
            "qc_threshold": 0.05,
            "qc_min_pairs": 10,
            **values,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    # and the API with no layout at all
    api = APIClient()
    api.force_authenticate(
        __import__("django.contrib.auth", fromlist=["get_user_model"])
        .get_user_model()
        .objects.get(username="researcher")
    )
    response = api.post(
        "/api/da/campaigns/", {"name": "tiny-api", "dataset": "tiny", "human_system": "gt_tiny"}, format="json"
    )
    assert response.status_code == 201, response.json()


def test_the_paper_layout_is_suggested_when_the_dataset_is_large_enough():
    layout, workers = planning.suggest(n_captions=6000, n_degradable=1000, needed_pairs=10)
    assert layout == planning.PAPER_LAYOUT and workers == 3
    layout, workers = planning.suggest(n_captions=12, n_degradable=4, needed_pairs=10)
    assert layout.pairs_per_hit == 4 and planning.reach(layout, 12, 10).ok and workers == 3
    with pytest.raises(ValueError, match="no human caption can be degraded"):
        planning.suggest(n_captions=12, n_degradable=0, needed_pairs=10)


def test_human_captions_are_originals_not_system_items_and_are_spread_evenly(db):
    dataset = make_dataset("spread", n_videos=30)
    human = System.objects.get(dataset=dataset, is_human=True)
    campaign = campaigns.create_campaign(
        name="spread",
        dataset=dataset,
        human_system=human,
        systems=list(dataset.systems.filter(is_human=False)),
        hit_size=20,
        pairs_per_hit=4,
        repeats_per_hit=2,
        min_control_distance=5,
        seed=3,
    )
    items = Item.objects.filter(hit__campaign=campaign)
    assert not items.filter(item_type__in=["system", "repeat"], caption__system=human).exists()
    system_captions = set(items.filter(item_type="system").values_list("caption_id", flat=True))
    assert system_captions == set(dataset.systems.exclude(pk=human.pk).values_list("captions", flat=True))
    uses = Counter(items.filter(item_type="original").values_list("caption_id", flat=True))
    assert sum(uses.values()) == campaign.hits.count() * 4  # 90 captions / 12 slots = 8 HITs: 32 originals
    assert len(uses) == 30 and max(uses.values()) - min(uses.values()) <= 1  # every human caption, evenly
