"""Celery tasks of metrics_eval. They take primary keys, re-check state and are safe to run twice (computing
again replaces the same scores)."""

from celery import shared_task

from annotation_site.corpus.models import Dataset
from annotation_site.jobs import services as jobs
from annotation_site.jobs.models import Job

from . import services, text_metrics


@shared_task(acks_late=True)
def compute_metric_scores(job_id, dataset_id, names, reference_sets=None):
    """Compute text metrics for a dataset, reporting progress on the job."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.status == Job.Status.SUCCEEDED:
        return None  # unknown, or already done by an earlier delivery
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        jobs.mark_failed(job_id, f"dataset {dataset_id} no longer exists")
        return None
    jobs.mark_running(job_id, message=f"computing {', '.join(names)} for {dataset.name}")

    def progress(done, total, message):
        jobs.report_progress(job_id, done, total=total, message=message)

    try:
        result = services.compute_scores(dataset, names, reference_sets=reference_sets or None, progress=progress)
    except (services.MetricError, text_metrics.JavaMissing) as exc:
        jobs.mark_failed(job_id, exc)  # a clear message for the page; nothing to retry
        return None
    except Exception as exc:  # a fault: the page says so in the platform's words, the log keeps the traceback
        jobs.mark_failed(
            job_id,
            f"computing {', '.join(names)} failed on an unexpected error ({type(exc).__name__}). The server's log "
            "has the details",
        )
        raise
    jobs.mark_succeeded(job_id, result, message=f"scored {services.computed_summary(result)}")
    return result
