"""End to end with Direct Assessment: a campaign planned by the assessment app, judged by its simulated crowd,
its results read through assessment/results.py; metric scores imported; `correlate --human da` against SciPy on
the DA contract's own frames."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats as scipy_stats

from assessment import results, simulation
from metrics_eval import services
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
