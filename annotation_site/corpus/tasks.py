"""Celery tasks of the corpus. They take primary keys, re-check state and are safe to run twice."""
from celery import shared_task

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
