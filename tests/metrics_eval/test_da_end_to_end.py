"""End to end with Direct Assessment: a campaign planned by the assessment app, judged by its simulated crowd,
its results read through assessment/results.py; metric scores imported; `correlate --human da` against SciPy on
the DA contract's own frames."""

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient
from scipy import stats as scipy_stats

from assessment import results, simulation
from metrics_eval import services
from metrics_eval.models import CaptionPair, Report
from tests.assessment.conftest import make_dataset, small_campaign

pytestmark = pytest.mark.django_db
QUALITY = {"human": 85, "Alpha": 70, "Beta": 50, "Gamma": 45}


@pytest.fixture
def judged():
    dataset = make_dataset("da-metrics", n_videos=24)
    campaign = small_campaign(dataset, "da-metrics", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 12, "random": 2}, QUALITY, seed=5, hits_per_worker=3)
    rng = np.random.default_rng(1)
    lines = ["video_id,system,metric,score"]
    for video in dataset.videos.order_by("position"):
        for system, quality in QUALITY.items():
            lines.append(f"{video.external_id},{system},fake_bleu,{quality / 100 + rng.normal(scale=0.2):.5f}")
            lines.append(f"{video.external_id},{system},fake_noise,{rng.normal():.5f}")
    services.import_scores(dataset, "\n".join(lines) + "\n", "fake.csv")
    return campaign


def test_scores_and_pairs_made_from_the_campaigns_captions_download_import(staff_client):
    """The platform's CSV downloads write a video id beginning with '-' (YouCook2's -AwyG1JcMp8) as
    '-AwyG1JcMp8 (the formula guard); a scores file made from /da/campaigns/NAME/captions.csv was refused with
    unknown video "'-AwyG1JcMp8". Every CSV importer takes the guard's quote off, as the DA importer did."""
    dataset = make_dataset("yc2-da", n_videos=24)
    dataset.videos.filter(external_id="v0000").update(external_id="-AwyG1JcMp8")
    dataset.videos.filter(external_id="v0001").update(external_id="@v0001")
    campaign = small_campaign(dataset, "yc2-da", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 12}, QUALITY, seed=5, hits_per_worker=3)
    download = staff_client.get("/da/campaigns/yc2-da/captions.csv").content.decode()
    assert "'-AwyG1JcMp8" in download and "'@v0001" in download
    captions = list(csv.DictReader(io.StringIO(download)))  # as a script or a spreadsheet reads the download
    scores = ["video_id,system,metric,score"] + [
        f"{row['video_id']},{row['system']},by_z,{row['z']}" for row in captions
    ]
    result = services.import_scores(dataset, "\n".join(scores) + "\n", "from-download.csv")
    assert result.metrics == {"by_z": len(captions)}
    stored = {
        (score.caption.video.external_id, score.caption.system.name)
        for score in dataset.metrics.get(name="by_z").scores.select_related("caption__video", "caption__system")
    }
    assert {("-AwyG1JcMp8", "Alpha"), ("@v0001", "Alpha")} <= stored
    pairs = ["video_id,correct,foil"] + [
        f"{row['video_id']},human,Alpha" for row in captions if row["system"] == "Alpha"
    ]
    services.import_pairs(dataset, "\n".join(pairs) + "\n", "pairs.csv", pair_set="from-download")
    assert CaptionPair.objects.filter(correct__video__external_id="-AwyG1JcMp8").count() == 1


def test_a_campaigns_metric_page_is_reached_from_the_interface(staff_client):
    """No template linked /metrics/campaigns/NAME/: the campaign page and the metrics index link it now, and its
    refusal of a dataset without metric scores ("compute or import some") links the dataset's metrics page."""
    dataset = make_dataset("da-links", n_videos=24)
    campaign = small_campaign(dataset, "da-links", qc_min_pairs=6)
    simulation.simulate_campaign(campaign, {"diligent": 12}, QUALITY, seed=5, hits_per_worker=3)
    link = 'href="/metrics/campaigns/da-links/"'
    assert link in staff_client.get("/da/campaigns/da-links/").content.decode()
    assert link in staff_client.get("/metrics/").content.decode()
    page = staff_client.get("/metrics/campaigns/da-links/").content.decode()
    assert "compute or import some" in page
    assert 'href="/metrics/datasets/da-links/#scores-heading"' in page
    assert 'href="/da/campaigns/da-links/"' in page


def correlate(*args):
    out = io.StringIO()
    call_command("correlate", *args, "--format", "json", "--resamples", "200", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


def test_correlate_against_da_scores(judged, staff_client):
    # the human system is left out of metric correlations unless included (test_human_systems.py)
    captions = results.caption_scores(judged)
    captions = captions.loc[~captions["is_human"]].reset_index(drop=True)
    scores = {}
    for row in judged.dataset.metrics.get(name="fake_bleu").scores.select_related("caption__video", "caption__system"):
        scores[(row.caption.video.external_id, row.caption.system.name)] = row.score
    metric = np.array([scores[(v, s)] for v, s in zip(captions["video_id"], captions["system"])])

    segment = correlate("--campaign", "da-metrics", "--human", "da", "--metrics", "fake_bleu,fake_noise")
    assert (segment["human"], segment["campaign"], segment["level"]) == ("da", "da-metrics", "segment")
    cell = segment["metrics"]["fake_bleu"]["z"]
    assert cell["n"] == len(captions)
    assert cell["r"] == pytest.approx(scipy_stats.pearsonr(captions["z"], metric)[0])
    assert segment["metrics"]["fake_bleu"]["raw"]["r"] == pytest.approx(
        scipy_stats.pearsonr(captions["raw"], metric)[0]
    )
    assert cell["ci"][0] < cell["r"] < cell["ci"][1]

    system = correlate(
        "--campaign",
        "da-metrics",
        "--human",
        "da",
        "--metrics",
        "fake_bleu",
        "--level",
        "system",
        "--method",
        "spearman",
    )
    table = results.system_scores(judged).set_index("system").drop(index="human")
    means = captions.assign(metric=metric).groupby("system")["metric"].mean()
    assert system["metrics"]["fake_bleu"]["z"]["n"] == 3
    assert system["metrics"]["fake_bleu"]["z"]["r"] == pytest.approx(
        scipy_stats.spearmanr(table["z"].sort_index(), means.sort_index())[0]
    )

    page = staff_client.get("/metrics/campaigns/da-metrics/?level=system")
    assert page.status_code == 200 and b'id="correlations"' in page.content


def test_a_campaign_of_another_dataset_than_the_url_names_is_refused(judged, tiny_dataset, staff_user):
    """POST /api/metrics/datasets/tiny/correlate/ with campaign da-metrics (of dataset da-metrics) answered the
    correlation of da-metrics' metrics as if it were tiny's; it is refused with a 400 naming the campaign."""
    api = APIClient()
    api.force_authenticate(staff_user)
    body = {"human": "da", "campaign": "da-metrics", "metrics": ["fake_bleu"], "resamples": 100}
    response = api.post("/api/metrics/datasets/tiny/correlate/", body, format="json")
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "campaign": [
            "campaign da-metrics belongs to dataset da-metrics, not tiny: correlate it under dataset da-metrics, "
            "or name a campaign of tiny"
        ]
    }
    assert not Report.objects.exists()
    own = api.post("/api/metrics/datasets/da-metrics/correlate/", body, format="json")
    assert own.status_code == 201 and own.json()["campaign"] == "da-metrics"


def test_the_command_refuses_a_campaign_of_another_dataset_before_storing_a_report(judged, tiny_dataset):
    """correlate --dataset tiny --campaign da-metrics stored the report of da-metrics, then refused it."""
    with pytest.raises(CommandError, match="--campaign: campaign da-metrics belongs to dataset da-metrics, not tiny"):
        correlate("--dataset", "tiny", "--campaign", "da-metrics", "--human", "da", "--metrics", "fake_bleu")
    assert not Report.objects.exists()


def test_the_campaign_page_shows_a_grouping_at_system_level_as_a_form_error(judged, staff_client):
    page = staff_client.get("/metrics/campaigns/da-metrics/?level=system&group_by=video&resamples=100")
    assert page.status_code == 200
    assert b"grouping by video applies to the segment level only" in page.content
    assert b'id="correlations"' not in page.content and not Report.objects.exists()
