"""Celery tasks of the corpus. They take primary keys, re-check state and are safe to run twice."""

from celery import shared_task

from annotation_site.jobs import services as jobs

from . import video_processing
from .models import Video


@shared_task(acks_late=True)
def process_video(video_id):
    """Probe a stored video (duration, size) and make its thumbnail."""
    video = Video.objects.filter(pk=video_id).first()
    if video is None or not video.file:
        return None
    video_processing.process_video(video)
    return video.status


@shared_task
def probe_pending_videos(limit=100):
    """Periodic (Celery beat): process videos whose files were never probed, e.g. after a worker was lost."""
    ids = list(Video.objects.filter(status=Video.Status.PENDING).exclude(file="").values_list("pk", flat=True)[:limit])
    for video_id in ids:
        process_video.delay(video_id)
    return len(ids)


@shared_task(acks_late=True)
def process_videos(job_id, video_ids):
    """Process many videos as one job, reporting progress after each (safe to rerun: each step is idempotent)."""
    jobs.mark_running(job_id, total=len(video_ids), message="processing videos")
    try:
        failed = 0
        for done, video in enumerate(Video.objects.filter(pk__in=video_ids).order_by("position"), start=1):
            video_processing.process_video(video)
            failed += video.status == Video.Status.FAILED
            jobs.report_progress(job_id, done, message=f"{video.external_id}: {video.status}")
        jobs.mark_succeeded(
            job_id,
            {"processed": len(video_ids), "failed": failed},
            message=f"{len(video_ids) - failed} ready, {failed} failed",
        )
    except Exception as exc:  # recorded for the page; the task itself is not retried
        jobs.mark_failed(job_id, exc)
        raise
