"""The public results contract (metrics_eval calls it) and the da_report command's JSON document."""

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from assessment import loading, results, scoring, simulation
from assessment.analysis import analyse

from .conftest import make_dataset, small_campaign

QUALITY = {"human": 85, "Alpha": 70, "Beta": 50, "Gamma": 45}


@pytest.fixture
def rated(db):
    campaign = small_campaign(make_dataset("rated", n_videos=24), "rated", qc_min_pairs=6)
    crowd = simulation.simulate_campaign(
        campaign, {"diligent": 12, "random": 3, "constant": 2}, QUALITY, seed=3, hits_per_worker=3
    )
    return campaign, crowd


def test_caption_scores_contract(rated):
    campaign, crowd = rated
    captions = results.caption_scores(campaign)
    assert list(captions.columns) == ["video_id", "system", "raw", "z", "n", "is_human"]
    assert set(captions["system"]) == set(QUALITY)  # the human system included
    assert (captions["is_human"] == (captions["system"] == "human")).all()
    assert captions["video_id"].str.startswith("v").all()
    # passing workers only: the same as scoring the loaded frame with the passing workers by hand
    analysis = analyse(campaign)
    passing = analysis.qc.loc[analysis.qc["passed"], "worker"]
    assert 0 < len(passing) < len(analysis.qc)
    expected = scoring.caption_scores(loading.judgments_frame(campaign), passing)
    pd.testing.assert_frame_equal(captions.drop(columns="is_human"), expected)
    assert results.caption_scores("rated").equals(captions)  # by name as well


def test_system_scores_contract(rated):
    campaign, _ = rated
    systems = results.system_scores(campaign)
    assert list(systems.columns) == ["system", "raw", "z", "n", "is_human"]
    assert systems.loc[systems["is_human"], "system"].tolist() == ["human"]
    assert systems["z"].is_monotonic_decreasing
    captions = results.caption_scores(campaign)
    for row in systems.itertuples():
        mine = captions[captions["system"] == row.system]
        assert row.raw == pytest.approx(mine["raw"].mean())
        assert row.z == pytest.approx(mine["z"].mean())
        assert row.n == mine["n"].sum()


def test_da_report_json_shape(rated):
    campaign, crowd = rated
    out = io.StringIO()
    call_command("da_report", campaign="rated", format="json", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) == {"parameters", "workers", "systems", "wins"}
    assert report["parameters"]["qc_test"] == "wilcoxon"
    assert report["parameters"]["qc_threshold"] == 0.05 and report["parameters"]["qc_min_pairs"] == 6
    assert len(report["workers"]) == len(crowd.workers)
    for worker in report["workers"]:
        assert set(worker) == {"worker_id", "n_pairs", "p_value", "passed", "status"}
        assert isinstance(worker["passed"], bool) and isinstance(worker["n_pairs"], int)
        assert worker["status"] in ("passed", "failed") and worker["passed"] == (worker["status"] == "passed")
    assert {w["worker_id"] for w in report["workers"]} == set(crowd.workers["external_id"])
    assert [set(s) for s in report["systems"]] == [{"system", "raw", "z", "n", "is_human"}] * len(QUALITY)
    assert [s["system"] for s in report["systems"] if s["is_human"]] == ["human"]
    zs = [s["z"] for s in report["systems"]]
    assert zs == sorted(zs, reverse=True)
    assert report["systems"] == results.system_scores(campaign).to_dict(orient="records")
    assert report["wins"] and all(len(w) == 3 and w[2] < 0.05 for w in report["wins"])
    assert ["human", "Gamma"] in [w[:2] for w in report["wins"]]


def test_da_report_text_and_unknown_campaign(rated):
    out = io.StringIO()
    call_command("da_report", campaign="rated", stdout=out)
    assert "pass rate" in out.getvalue() and "human (human)" in out.getvalue()
    with pytest.raises(CommandError, match="no campaign"):
        call_command("da_report", campaign="nope", format="json")


def test_report_of_a_campaign_without_judgments(campaign):
    report = results.report(campaign)
    assert report["workers"] == [] and report["systems"] == [] and report["wins"] == []
    assert results.caption_scores(campaign).empty
