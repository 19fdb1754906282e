""" "Compute" never blocks the request (issue #9): on the embedded default (Celery eager) the job runs in a thread
of the web process, with a broker on a worker; the page follows the job; a second click while it runs starts
nothing (the API answers 409 with the running job, the page shows it).

The computation itself is held on an event here so the test can look at the job while it runs (the real
computation is covered by test_text_metrics.py, test_tasks.py and test_pages.py). On the code before this change
the request ran the computation itself and answered only once it had finished."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation_site.jobs import services as jobs
from annotation_site.jobs.models import Job
from metrics_eval import services
from tests.conftest import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def held_computation(monkeypatch):
    """services.compute_scores waits for ``release`` (at most 30 s) and reports the thread it ran in."""
    state = {"release": threading.Event(), "started": threading.Event(), "threads": []}

    def compute(dataset, names, *, reference_sets=None, progress=None):
        state["threads"].append(threading.get_ident())
        progress(1, 2, "tokenized captions and references")
        state["started"].set()
        state["release"].wait(30)
        return {
            "captions": 12,
            "scored": {name: 12 for name in names},
            "without_references": 0,
            "human": {"without_other_references": 0},
        }

    monkeypatch.setattr(services, "compute_scores", compute)
    yield state
    state["release"].set()


def finished(job_id):
    return wait_until(
        lambda: Job.objects.filter(pk=job_id, status__in=["succeeded", "failed"]).first(),
        timeout=60,
        what="the job to finish",
    )


def test_compute_runs_off_the_request_and_is_never_started_twice(
    celery_worker, tiny_dataset, staff_user, held_computation, client
):
    client.force_login(staff_user)
    response = client.post("/metrics/datasets/tiny/compute/", {"metrics": ["bleu4"]})
    assert response.status_code == 302  # answered while the computation is still held
    job = Job.objects.get(kind=services.COMPUTE_KIND)
    assert not job.finished
    assert held_computation["started"].wait(30), "the job never started"
    assert held_computation["threads"] and held_computation["threads"][0] != threading.get_ident()

    page = client.get("/metrics/datasets/tiny/").content.decode()
    assert "Computing the metrics in the background; this page shows the progress." in page
    assert 'id="compute-job"' in page and 'data-finished="false"' in page and "tokenized captions" in page

    # a second click while it runs: no second job; the page says so and shows the running one
    again = client.post("/metrics/datasets/tiny/compute/", {"metrics": ["bleu4", "meteor"]}, follow=True)
    assert "Already computing metrics for this dataset" in again.content.decode()
    assert f"/api/jobs/{job.pk}/" in again.content.decode()
    api = APIClient()
    api.force_authenticate(staff_user)
    conflict = api.post("/api/metrics/datasets/tiny/compute/", {"metrics": ["cider"]}, format="json")
    assert conflict.status_code == 409
    assert conflict.json()["job"] == str(job.pk) and "already being computed" in conflict.json()["detail"]
    assert Job.objects.filter(kind=services.COMPUTE_KIND).count() == 1

    held_computation["release"].set()
    done = finished(job.pk)
    assert (
        done.status == Job.Status.SUCCEEDED
        and done.message.startswith("scored ")
        and done.message.endswith(" of 12 captions")
    )
    assert len(held_computation["threads"]) == 1

    # finished: a new computation may start
    restarted = api.post("/api/metrics/datasets/tiny/compute/", {"metrics": ["cider"]}, format="json")
    assert restarted.status_code == 202 and restarted.json()["job"] != str(job.pk)
    assert finished(restarted.json()["job"]).status == Job.Status.SUCCEEDED


def test_an_abandoned_job_does_not_block_forever(tiny_dataset, held_computation):
    stale = jobs.create_job(services.COMPUTE_KIND, scope=f"dataset:{tiny_dataset.pk}")
    jobs.mark_running(stale.pk, message="computing")
    Job.objects.filter(pk=stale.pk).update(
        updated_at=timezone.now() - services.COMPUTE_STALE_AFTER - timedelta(minutes=1)
    )
    held_computation["release"].set()
    job = services.start_compute_job(tiny_dataset, ["bleu4"])
    stale.refresh_from_db()
    assert stale.status == Job.Status.FAILED and stale.error.startswith("abandoned: no progress since")
    assert finished(job.pk).status == Job.Status.SUCCEEDED
