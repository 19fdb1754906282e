"""Computing metric scores as a Celery job: it runs eagerly on the embedded default and in a real worker consuming
from the broker when CELERY_BROKER_URL is set (the celery_worker fixture), and ends with its progress counts
complete (the steps reported in between are not checked here); a finished job is not redone, and a missing Java
or dataset fails the job with a clear message."""

import threading

import pytest
from celery.signals import task_prerun

from annotation_site.jobs.models import Job
from metrics_eval import services
from metrics_eval.models import Metric, MetricScore
from metrics_eval.tasks import compute_metric_scores
from tests.conftest import wait_until

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_compute_job_runs_in_the_right_process_and_ends_with_complete_progress_counts(
    celery_worker, java, tiny_dataset, settings
):
    ran_in = []

    def record(sender=None, args=(), **kwargs):
        if sender.name == "metrics_eval.tasks.compute_metric_scores":
            ran_in.append((args[0], threading.get_ident()))

    task_prerun.connect(record, weak=False)
    try:
        job = services.start_compute_job(tiny_dataset, ["bleu4", "rouge_l", "cider"])
        job = wait_until(
            lambda: Job.objects.filter(pk=job.pk, status__in=["succeeded", "failed"]).first(),
            timeout=120,
            what="the metric job to finish",
        )
    finally:
        task_prerun.disconnect(record)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert (job.done, job.total) == (1 + 3 * 3, 1 + 3 * 3)  # tokenising, then 3 metric families x 3 systems
    assert job.result["scored"] == {"bleu4": 12, "rouge_l": 12, "cider": 12}
    assert (
        job.scope == f"dataset:{tiny_dataset.pk}"
        and job.message == "scored bleu4 12, rouge_l 12, cider 12 of 12 captions"
    )
    assert MetricScore.objects.filter(metric__dataset=tiny_dataset).count() == 36
    threads = [thread for job_id, thread in ran_in if job_id == str(job.pk)]
    assert len(threads) == 1
    # never in the caller: on the embedded default (eager) a thread of this process runs it, with a broker a
    # real worker takes the message
    assert threads[0] != threading.get_ident()
    assert settings.CELERY_TASK_ALWAYS_EAGER == (celery_worker is None)


@pytest.mark.django_db
def test_the_task_skips_a_finished_job_and_fails_clearly_without_java_or_dataset(
    tiny_dataset, eager_tasks, monkeypatch
):
    import shutil

    job = Job.objects.create(kind=services.COMPUTE_KIND, status=Job.Status.SUCCEEDED, message="done before")
    assert compute_metric_scores(str(job.pk), tiny_dataset.pk, ["bleu4"]) is None  # already done: nothing to do
    job.refresh_from_db()
    assert job.message == "done before" and not Metric.objects.exists()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    failing = Job.objects.create(kind=services.COMPUTE_KIND)
    compute_metric_scores(str(failing.pk), tiny_dataset.pk, ["bleu4"])
    failing.refresh_from_db()
    assert failing.status == Job.Status.FAILED and "needs Java" in failing.error
    gone = Job.objects.create(kind=services.COMPUTE_KIND)
    compute_metric_scores(str(gone.pk), 987654, ["bleu4"])
    gone.refresh_from_db()
    assert gone.status == Job.Status.FAILED and "no longer exists" in gone.error
