"""Celery tasks of Direct Assessment. They take primary keys, re-check state and are safe to run twice (QC rows
are replaced, one per campaign and worker)."""

from celery import shared_task

from annotation_site.jobs import services as jobs

from . import services
from .models import Campaign


@shared_task(acks_late=True)
def compute_worker_qc(campaign_id, worker_id):
    """Quality control of one worker after a completed HIT (sent with transaction.on_commit)."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return None
    qc = services.store_qc(campaign, worker_ids=[worker_id])
    return {"workers": len(qc), "passed": int(qc["passed"].sum())}


@shared_task(acks_late=True)
def compute_campaign_qc(job_id, campaign_id):
    """Quality control of every worker of a campaign, as a Job (the campaign page shows its progress)."""
    jobs.mark_running(job_id, total=1, message="computing quality control")
    try:
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            jobs.mark_failed(job_id, "the campaign no longer exists")
            return None
        qc = services.store_qc(campaign)
        result = {"workers": len(qc), "passed": int(qc["passed"].sum())}
        jobs.report_progress(job_id, 1)
        jobs.mark_succeeded(job_id, result, message=f"{result['passed']} of {result['workers']} workers passed")
        return result
    except Exception as exc:
        jobs.mark_failed(job_id, exc)
        raise


@shared_task(acks_late=True)
def release_idle_assignments():
    """Celery beat: unused HIT slots of accounts and link workers come back (services.release_idle_assignments)."""
    from . import services

    return services.release_idle_assignments()
