"""Attaching a folder of video files to a dataset's videos, matched by video id.

A FactVC import knows its videos only by (YouTube) id; a lab that holds the clips locally attaches them here:
``clips/v_-A6e83tl4Y8.mp4`` (or ``clips/-A6e83tl4Y8.mp4``) becomes the file of video ``v_-A6e83tl4Y8``. The plan
is computed first (every match, every video without a file, every ambiguous name), then files are copied to media
storage and the rows updated in one transaction; probing (duration, thumbnail) runs as one Celery job whose
progress the dataset page shows.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.core.files import File
from django.db import transaction

from annotation_site.jobs import services as jobs

from .models import Video
from .services import VIDEO_SUFFIXES, safe_filename

PROCESS_KIND = "process-videos"


@dataclass
class AttachPlan:
    matches: list = field(default_factory=list)  # (video, path)
    missing: list = field(default_factory=list)  # video ids without a file
    ambiguous: list = field(default_factory=list)  # (video id, [paths])
    unused: list = field(default_factory=list)  # video files matching no video


def plan_attach(dataset, folder, *, replace=False):
    """Match the video files in ``folder`` to the dataset's videos (by id, with or without ActivityNet's ``v_``)."""
    files = {}
    for path in sorted(Path(folder).iterdir()):
        if path.is_file() and path.suffix.lower() in VIDEO_SUFFIXES:
            files.setdefault(path.stem, []).append(path)
    plan = AttachPlan()
    used = set()
    for video in dataset.videos.order_by("position", "external_id"):
        if video.file and not replace:
            continue
        candidates = files.get(video.external_id) or (
            files.get(video.external_id[2:]) if video.external_id.startswith("v_") else None
        )
        if not candidates:
            plan.missing.append(video.external_id)
        elif len(candidates) > 1:
            plan.ambiguous.append((video.external_id, candidates))
        else:
            plan.matches.append((video, candidates[0]))
            used.add(candidates[0])
    plan.unused = [p for paths in files.values() for p in paths if p not in used]
    return plan


def attach(plan, *, progress=None):
    """Copy the matched files into media storage and point the videos at them; returns the updated videos.

    The database changes are one transaction; a file already copied when a later copy fails stays in storage
    unreferenced (storage is not transactional) and the database is left as it was.
    """
    updated = []
    for video, path in plan.matches:
        with path.open("rb") as handle:
            video.file.save(safe_filename(path.name), File(handle), save=False)
        video.url = ""
        video.status = Video.Status.PENDING
        video.duration = video.width = video.height = None
        video.processing_error = ""
        updated.append(video)
        if progress:
            progress(video)
    with transaction.atomic():
        Video.objects.bulk_update(updated, ["file", "url", "status", "duration", "width", "height", "processing_error"])
    return updated


def videos_to_process(dataset):
    """Video files never probed, or whose probing failed (e.g. after a worker was lost, or a bad upload)."""
    return dataset.videos.exclude(file="").filter(status__in=(Video.Status.PENDING, Video.Status.FAILED))


def start_processing(dataset, video_ids, *, user=None):
    """Queue one job that probes these videos and makes their thumbnails (progress in ``jobs.Job``)."""
    from .tasks import process_videos

    with transaction.atomic():
        job = jobs.create_job(
            PROCESS_KIND,
            scope=f"dataset:{dataset.pk}",
            user=user,
            total=len(video_ids),
            message=f"{len(video_ids)} videos to process",
        )
        jobs.enqueue(job, process_videos, list(video_ids))
    return job
