"""Every worker of a campaign has a QC status in the report and on the page (docs/direct-assessment.md, "Status"),
also before their first judgment. With 5 workers, 4 holding a HIT they had not rated yet and 1 who rated a whole
HIT, the page said "Workers 5" but "0 passed · 0 failed · 1 insufficient data · 0 in progress" and report.json
listed one worker, while services.qc_statuses gave the other four IN_PROGRESS: the analysis computed QC from the
judgments only. Now the analysis counts the campaign's workers as qc_statuses does, with a constant number of
queries whatever the number of workers."""

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessment import results, services, simulation, workers
from assessment.analysis import analyse
from tests.assessment.conftest import make_dataset, small_campaign

pytestmark = pytest.mark.django_db
QUALITY = {"human": 85, "Alpha": 70, "Beta": 50, "Gamma": 45}


def _campaign(holding):
    """One worker rated a whole HIT (3 pairs, below the QC minimum of 6: insufficient data); ``holding`` more
    workers hold a HIT each and have rated nothing."""
    dataset = make_dataset("da-counts", n_videos=12)
    campaign = small_campaign(dataset, "da-counts", qc_min_pairs=6, workers_per_hit=5)
    simulation.simulate_campaign(campaign, {"diligent": 1}, QUALITY, seed=5, hits_per_worker=1)
    for i in range(holding):
        assert services.assign(campaign, workers.worker_by_external_id(f"holder-{i}")) is not None
    return campaign


def _statuses_by_id(campaign):
    names = dict(campaign.hits.values_list("assignments__worker_id", "assignments__worker__external_id"))
    return {names[pk]: str(status) for pk, status in services.qc_statuses(campaign).items()}


def test_workers_holding_a_hit_without_a_judgment_are_in_progress_in_the_report():
    campaign = _campaign(holding=4)
    expected = _statuses_by_id(campaign)
    assert sorted(expected.values()) == ["in_progress"] * 4 + ["insufficient_data"]
    report = results.report(campaign)
    assert {w["worker_id"]: w["status"] for w in report["workers"]} == expected
    assert [w["worker_id"] for w in report["workers"]] == sorted(expected)  # (by id, as before)
    holders = [w for w in report["workers"] if w["status"] == "in_progress"]
    assert all(w["n_pairs"] == 0 and w["p_value"] == 1.0 and not w["passed"] for w in holders)
    parameters = report["parameters"]
    assert parameters["n_workers"] == 5 and parameters["n_workers_passed"] == 0
    assert parameters["n_workers_by_status"] == {
        "passed": 0,
        "failed": 0,
        "insufficient_data": 1,
        "in_progress": 4,
    }
    assert parameters["pass_rate"] is None  # (no worker with a verdict)
    # the statuses are the same whichever way they are read: da_report, the results endpoint, report.json
    out = io.StringIO()
    call_command("da_report", "--campaign", "da-counts", "--format", "json", stdout=out)
    assert {w["worker_id"]: w["status"] for w in json.loads(out.getvalue())["workers"]} == expected


def test_the_campaign_page_and_report_json_count_every_worker(staff_client):
    campaign = _campaign(holding=4)
    page = staff_client.get("/da/campaigns/da-counts/").content.decode()
    assert re.search(r"<dt>Workers</dt><dd>5</dd>", page)
    assert "Workers: 0 passed · 0 failed · 1 insufficient data · 4 in progress." in page
    download = json.loads(staff_client.get("/da/campaigns/da-counts/report.json").content)
    assert {w["worker_id"]: w["status"] for w in download["workers"]} == _statuses_by_id(campaign)
    api = staff_client.get("/api/da/campaigns/da-counts/results/").json()
    assert api["parameters"]["n_workers_by_status"]["in_progress"] == 4 and len(api["workers"]) == 5


def test_a_released_assignment_without_a_judgment_is_not_a_worker_of_the_campaign():
    """qc_statuses leaves out a worker whose only assignment was given back unfinished; so does the analysis."""
    campaign = _campaign(holding=2)
    holder = workers.worker_by_external_id("holder-1")
    assignment = holder.assignments.get(hit__campaign=campaign)
    assert services.release_assignment(assignment.pk, "idle")
    expected = _statuses_by_id(campaign)
    assert "holder-1" not in expected and expected["holder-0"] == "in_progress"
    assert {w["worker_id"]: w["status"] for w in results.report(campaign)["workers"]} == expected


def test_a_worker_who_finished_without_a_judgment_has_insufficient_data():
    campaign = _campaign(holding=1)
    holder = workers.worker_by_external_id("holder-0")
    holder.assignments.filter(hit__campaign=campaign).update(completed_at="2026-11-28T12:00:00Z")
    expected = _statuses_by_id(campaign)
    assert expected["holder-0"] == "insufficient_data"
    assert {w["worker_id"]: w["status"] for w in results.report(campaign)["workers"]} == expected


def test_the_campaign_page_queries_do_not_grow_with_the_workers(staff_client):
    def page_queries():
        with CaptureQueriesContext(connection) as captured:
            assert staff_client.get("/da/campaigns/da-counts/").status_code == 200
        return len(captured.captured_queries)

    campaign = _campaign(holding=1)
    staff_client.get("/da/campaigns/da-counts/")  # (the session and the like, once)
    few = page_queries()
    for i in range(1, 4):
        services.assign(campaign, workers.worker_by_external_id(f"holder-{i}"))
    assert page_queries() == few
    assert analyse(campaign).parameters["n_workers_by_status"]["in_progress"] == 4


def test_the_metric_refusal_counts_the_workers_in_progress():
    """metrics_eval's sentence for a campaign without DA scores reads the same counts."""
    campaign = _campaign(holding=4)
    from metrics_eval import services as metric_services

    lines = ["video_id,system,metric,score"]
    for video in campaign.dataset.videos.order_by("position"):
        lines += [f"{video.external_id},{system},bleu4,0.{len(system)}" for system in QUALITY]
    metric_services.import_scores(campaign.dataset, "\n".join(lines) + "\n", "scores.csv")
    with pytest.raises(CommandError) as refused:
        call_command(
            "correlate", "--campaign", "da-counts", "--human", "da", stdout=io.StringIO(), stderr=io.StringIO()
        )
    assert str(refused.value).startswith(
        "--campaign: campaign da-counts has no DA scores yet: no worker has passed quality control "
        "(1 insufficient data, 4 in progress)."
    )
