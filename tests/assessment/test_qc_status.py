"""QC status per worker (issue #9, item 2): passed / failed / insufficient data (below the minimum of pairs) /
in progress (not finished), stored in QCResult.status, exposed by services.qc_status(es) (what payment
policies read), the report, the page and the API; only passed workers count towards scores."""

import io
import json
import uuid

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from assessment import analysis, loading, quality_control, services, workers
from assessment.models import Assignment, Judgment, QCResult, QCStatus


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
    worker = {name: workers.worker_by_external_id(name) for name in ("good", "bad", "short", "busy")}
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
    assert services.qc_status(campaign, workers.worker_by_external_id("stranger")) is None

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


def test_a_campaign_qc_that_read_before_a_worker_finished_does_not_undo_the_workers_own(campaign, crowd, monkeypatch):
    """A lost update: the campaign's QC job reads the judgments while "busy" is still rating; the worker then
    finishes and their own QC (the task after a finished HIT) is stored; then the job writes what it had read.
    The worker's verdict must stay: the job's rows are older than theirs."""
    busy = crowd["busy"]
    open_hit = Assignment.objects.get(worker=busy, hit__campaign=campaign, completed_at__isnull=True)
    read = loading.judgments_frame
    interleaved = []

    def read_then_the_worker_finishes(campaign_, worker_ids=None):
        frame = read(campaign_, worker_ids)
        if not interleaved:  # the job's read only, not the worker's own QC below
            interleaved.append(True)
            rate(open_hit)
            services.store_qc(campaign, [busy.pk])
        return frame

    monkeypatch.setattr(loading, "judgments_frame", read_then_the_worker_finishes)
    services.store_qc(campaign)
    monkeypatch.undo()

    assert interleaved
    fresh = quality_control.worker_qc(
        loading.judgments_frame(campaign),
        test=campaign.qc_test,
        threshold=campaign.qc_threshold,
        min_pairs=campaign.qc_min_pairs,
        unfinished=loading.unfinished_workers(campaign),
    ).set_index("worker")
    stored = QCResult.objects.get(campaign=campaign, worker=busy)
    assert (stored.status, stored.n_pairs) == (QCStatus.PASSED, int(fresh.loc[busy.pk, "n_pairs"]))
    # the job's rows of the workers who did not change were written
    assert QCResult.objects.filter(campaign=campaign).count() == len(crowd)


def test_a_stored_result_is_replaced_only_by_one_stamped_as_late_or_later(campaign, crowd):
    from datetime import timedelta

    from annotation_site.newest_wins import database_now, upsert_newest

    services.store_qc(campaign)
    stored = {r.worker_id: r for r in QCResult.objects.filter(campaign=campaign)}
    good, bad = stored[crowd["good"].pk], stored[crowd["bad"].pk]
    fields = ["n_pairs", "computed_at"]

    def row(result, n_pairs, at):
        return QCResult(
            campaign=campaign,
            worker_id=result.worker_id,
            test=result.test,
            threshold=result.threshold,
            min_pairs=result.min_pairs,
            n_pairs=n_pairs,
            passed=result.passed,
            status=result.status,
            computed_at=at,
        )

    upsert_newest(
        QCResult,
        [
            row(good, 999, good.computed_at - timedelta(seconds=1)),
            row(bad, 777, bad.computed_at + timedelta(seconds=1)),
        ],
        unique_fields=["campaign", "worker"],
        update_fields=fields,
        stamp_field="computed_at",
    )
    after = dict(QCResult.objects.filter(campaign=campaign).values_list("worker_id", "n_pairs"))
    assert after[good.worker_id] == good.n_pairs  # older: left as it was
    assert after[bad.worker_id] == 777  # later: replaced

    # a row stamped the same as the stored one replaces it ("as late or later")
    upsert_newest(
        QCResult,
        [row(bad, 778, QCResult.objects.get(pk=bad.pk).computed_at)],
        unique_fields=["campaign", "worker"],
        update_fields=fields,
        stamp_field="computed_at",
    )
    assert QCResult.objects.get(pk=bad.pk).n_pairs == 778

    # new rows are inserted, in batches the database accepts (Django's SQLite backend: 999 parameters a statement)
    newcomers = [workers.worker_by_external_id(f"new-{i:03d}") for i in range(120)]
    rows = [row(good, 5, database_now())] + [
        QCResult(
            campaign=campaign,
            worker=w,
            test="wilcoxon",
            threshold=0.05,
            min_pairs=3,
            n_pairs=i,
            passed=False,
            status=QCStatus.IN_PROGRESS,
            computed_at=database_now(),
        )
        for i, w in enumerate(newcomers)
    ]
    with CaptureQueriesContext(connection) as queries:
        upsert_newest(
            QCResult,
            rows,
            unique_fields=["campaign", "worker"],
            update_fields=["test", "threshold", "min_pairs", "n_pairs", "passed", "status", "computed_at"],
            stamp_field="computed_at",
        )
    inserts = [q for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    per_statement = connection.ops.bulk_batch_size(
        [f for f in QCResult._meta.concrete_fields if not f.primary_key], rows
    )
    assert len(inserts) == -(-len(rows) // per_statement)
    if connection.vendor == "sqlite":
        assert len(inserts) == 2  # 121 rows of 13 columns, 76 rows a statement
    after = dict(QCResult.objects.filter(campaign=campaign).values_list("worker_id", "n_pairs"))
    assert [after[w.pk] for w in newcomers] == list(range(120))
    assert after[good.worker_id] == 5
    with pytest.raises(ValueError, match="computed_at"):
        upsert_newest(
            QCResult, [], unique_fields=["campaign", "worker"], update_fields=["n_pairs"], stamp_field="computed_at"
        )


def test_a_campaign_qc_that_read_before_a_worker_took_more_work_does_not_undo_in_progress(campaign, crowd, monkeypatch):
    """The other way round: the campaign's QC job reads while "good" has finished; "good" then takes another HIT
    (their stored verdict becomes "in progress"); the job's older verdict must not replace that mark."""
    good = crowd["good"]
    services.store_qc(campaign)
    read = loading.judgments_frame
    interleaved = []

    def read_then_the_worker_takes_a_hit(campaign_, worker_ids=None):
        frame = read(campaign_, worker_ids)
        if not interleaved:
            interleaved.append(services.assign(campaign, good))
        return frame

    monkeypatch.setattr(loading, "judgments_frame", read_then_the_worker_takes_a_hit)
    services.store_qc(campaign)
    monkeypatch.undo()

    assert interleaved and interleaved[0] is not None
    assert QCResult.objects.get(campaign=campaign, worker=good).status == QCStatus.IN_PROGRESS
    assert services.qc_status(campaign, good) is QCStatus.IN_PROGRESS


def test_a_computation_stores_the_parameters_as_they_are_when_it_reads(campaign, crowd):
    """A caller holding the campaign from before a change of its QC parameters stores the new ones."""
    from assessment.models import Campaign

    held = Campaign.objects.get(pk=campaign.pk)
    Campaign.objects.filter(pk=campaign.pk).update(qc_min_pairs=40)
    services.store_qc(held)
    assert set(QCResult.objects.filter(campaign=campaign).values_list("min_pairs", flat=True)) == {40}
    assert QCResult.objects.get(campaign=campaign, worker=crowd["good"]).status == QCStatus.INSUFFICIENT_DATA
