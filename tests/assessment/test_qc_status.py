"""QC status per worker (issue #9, item 2): passed / failed / insufficient data (below the minimum of pairs) /
in progress (not finished), stored in QCResult.status, exposed by services.qc_status(es) (what payment
policies read), the report, the page and the API; only passed workers count towards scores."""

import io
import json
import uuid

import numpy as np
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from assessment import analysis, quality_control, services
from assessment.models import Judgment, QCResult, QCStatus


def test_status_of_every_case():
    status = quality_control.status_of(
        n_pairs=np.array([12, 12, 4, 12, 0]),
        p_value=np.array([0.01, 0.2, 0.01, 0.01, 1.0]),
        finished=np.array([True, True, True, False, True]),
        threshold=0.05,
        min_pairs=10,
    )
    assert status.tolist() == ["passed", "failed", "insufficient_data", "in_progress", "insufficient_data"]
    assert QCStatus.values == ["passed", "failed", "insufficient_data", "in_progress"]


def rate(assignment, *, good=True, stop_after=None):
    """Rate the assignment's items through the service as a worker would: originals high and degraded copies
    low (``good``), or the other way round; stop after ``stop_after`` items (an unfinished HIT)."""
    done = 0
    while (item := services.next_item(assignment)) is not None and (stop_after is None or done < stop_after):
        score = {"original": 90, "degraded": 10}.get(item.item_type, 50 + item.position % 7)
        if not good and item.item_type in ("original", "degraded"):
            score = 100 - score
        services.submit(assignment, item_id=item.pk, score=score, client_uuid=uuid.uuid4())
        done += 1
    assignment.refresh_from_db()
    return assignment


@pytest.fixture
def crowd(campaign):
    """Campaign of 3 HITs with 3 pairs each (QC minimum 3, but the Wilcoxon test needs 5 pairs to pass)."""
    worker = {name: services.worker_by_external_id(name) for name in ("good", "bad", "short", "busy")}
    for _ in range(2):
        rate(services.assign(campaign, worker["good"]))
        rate(services.assign(campaign, worker["bad"]), good=False)
    rate(services.assign(campaign, worker["short"]))  # one HIT: 3 pairs, too few to decide
    rate(services.assign(campaign, worker["busy"]))
    rate(services.assign(campaign, worker["busy"]), stop_after=4)  # a second HIT, not finished
    return worker


EXPECTED = {"good": "passed", "bad": "failed", "short": "insufficient_data", "busy": "in_progress"}


def test_statuses_are_stored_and_read_through_the_service(campaign, crowd):
    services.store_qc(campaign)
    stored = {r.worker.external_id: (r.status, r.passed) for r in QCResult.objects.filter(campaign=campaign)}
    assert stored == {name: (status, status == "passed") for name, status in EXPECTED.items()}
    statuses = services.qc_statuses(campaign)
    assert {w.external_id: statuses[w.pk] for w in crowd.values()} == EXPECTED
    assert services.qc_status(campaign, crowd["short"]) is QCStatus.INSUFFICIENT_DATA
    assert services.qc_status(campaign, services.worker_by_external_id("stranger")) is None

    # the busy worker finishes: a verdict; taking more work makes them in progress again (stored as well)
    rate(services.assign(campaign, crowd["busy"]))
    assert services.qc_status(campaign, crowd["busy"]) is QCStatus.PASSED
    assert QCResult.objects.get(campaign=campaign, worker=crowd["busy"]).status == QCStatus.PASSED
    services.assign(campaign, crowd["busy"])
    assert QCResult.objects.get(campaign=campaign, worker=crowd["busy"]).status == QCStatus.IN_PROGRESS
    assert services.qc_status(campaign, crowd["busy"]) is QCStatus.IN_PROGRESS


def test_statuses_in_the_report_the_api_and_the_page(campaign, crowd, staff_client, staff_user):
    out = io.StringIO()
    call_command("da_report", campaign=campaign.name, format="json", stdout=out)
    report = json.loads(out.getvalue())
    assert {w["worker_id"]: w["status"] for w in report["workers"]} == EXPECTED
    assert report["parameters"]["n_workers_by_status"] == {
        "passed": 1,
        "failed": 1,
        "insufficient_data": 1,
        "in_progress": 1,
    }
    assert report["parameters"]["pass_rate"] == 0.5  # of the two workers with a verdict

    api = APIClient()
    api.force_authenticate(staff_user)
    services.store_qc(campaign)
    rows = api.get(f"/api/da/campaigns/{campaign.name}/qc/").json()
    assert {r["worker_id"]: r["status"] for r in rows} == EXPECTED

    page = staff_client.get(f"/da/campaigns/{campaign.name}/").content.decode()
    for name, status in EXPECTED.items():
        assert f'<th scope="row" class="break">{name}</th>' in page
        assert f'data-status="{status}"' in page
    assert "insufficient data" in page and "in progress" in page

    text = io.StringIO()
    call_command("da_report", campaign=campaign.name, stdout=text)
    assert "1 passed, 1 failed, 1 insufficient data, 1 in progress" in text.getvalue()


def test_only_passed_workers_count_towards_scores(campaign, crowd):
    result = analysis.analyse(campaign)
    assert set(result.qc.loc[result.qc["passed"], "worker_id"]) == {"good"}
    # every scored judgment is the good worker's: 2 HITs x (system items + repeats + originals)
    expected = Judgment.objects.filter(
        assignment__worker=crowd["good"], item__item_type__in=["system", "repeat", "original"]
    ).count()
    assert expected > 0 and result.captions["n"].sum() == expected
