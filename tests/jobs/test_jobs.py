import pytest

from annotation_site.jobs import services
from annotation_site.jobs.models import Job

pytestmark = pytest.mark.django_db


def test_progress_is_reported_and_served(staff_client):
    job = services.create_job("demo-kind", scope="dataset:1", total=None)
    services.mark_running(job.pk, total=8, message="working")
    services.report_progress(job.pk, 2)
    body = staff_client.get(f"/api/jobs/{job.pk}/").json()
    assert (body["status"], body["done"], body["total"], body["percent"], body["finished"]) == (
        "running",
        2,
        8,
        25,
        False,
    )
    services.mark_succeeded(job.pk, {"n": 8})
    body = staff_client.get(f"/api/jobs/{job.pk}/").json()
    assert (body["status"], body["result"], body["finished"]) == ("succeeded", {"n": 8}, True)
    assert services.latest_job("dataset:1") == job and services.latest_job("dataset:2") is None


def test_failure_keeps_the_error():
    job = services.create_job("k")
    services.mark_failed(job.pk, ValueError("bad input"))
    job.refresh_from_db()
    assert (job.status, job.error, job.finished) == (Job.Status.FAILED, "bad input", True)


def test_jobs_are_staff_only(annotator, outsider, crowd_worker):
    job = services.create_job("k")
    assert annotator.api.get(f"/api/jobs/{job.pk}/").status_code == 403
    assert outsider.api.get(f"/api/jobs/{job.pk}/").status_code == 403
    assert crowd_worker.api.get(f"/api/jobs/{job.pk}/").status_code in (401, 403)
