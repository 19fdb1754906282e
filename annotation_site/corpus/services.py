"""Operations on the corpus (plain functions over the models; views, API and commands call these)."""

import posixpath
import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max

from annotation_site import uploads

from .models import Dataset, Reference, Video

VIDEO_SUFFIXES = (".mp4", ".m4v", ".webm", ".ogv", ".ogg", ".mov", ".mkv")


def datasets_with_counts():
    return Dataset.objects.annotate(
        n_videos=Count("videos", distinct=True), n_systems=Count("systems", distinct=True)
    ).order_by("name")


def reference_sets(dataset):
    """The names of the dataset's reference sets, sorted."""
    return list(
        Reference.objects.filter(video__dataset=dataset)
        .order_by("reference_set")
        .values_list("reference_set", flat=True)
        .distinct()
    )


def safe_filename(name):
    base = posixpath.basename(name.replace("\\", "/"))
    stem, dot, suffix = base.rpartition(".")
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem or suffix).strip("._") or "video"
    return f"{stem[:80]}.{suffix.lower()}" if dot else stem[:80]


def add_video(dataset, external_id, *, file=None, url=""):
    """Add a video to a dataset: an uploaded file (stored in media storage, then probed for its duration and
    thumbnail by a Celery task) or an external URL (a YouTube link plays as an embed)."""
    external_id = (external_id or "").strip()
    if not external_id:
        raise ValidationError({"external_id": "A video needs an id."})
    if bool(file) == bool(url):
        raise ValidationError("Give either a video file or a URL, not both and not neither.")
    if url and not url.startswith(("http://", "https://")):
        raise ValidationError({"url": "The URL must start with http:// or https://."})
    if file and not file.name.lower().endswith(VIDEO_SUFFIXES):
        raise ValidationError({"file": f"Unsupported video file type; use one of {', '.join(VIDEO_SUFFIXES)}."})
    if file:
        try:
            uploads.check_size(file.name, file.size, setting="CAPTIONEVAL_MAX_VIDEO_BYTES")
        except uploads.UploadRefused as exc:
            raise ValidationError({"file": f"{exc}; the video was not added."}) from None
    with transaction.atomic():
        if Video.objects.filter(dataset=dataset, external_id=external_id).exists():
            raise ValidationError({"external_id": f"Dataset {dataset.name} already has a video {external_id!r}."})
        last = Video.objects.filter(dataset=dataset).aggregate(m=Max("position"))["m"]
        video = Video(
            dataset=dataset,
            external_id=external_id,
            url=url,
            position=0 if last is None else last + 1,
            status=Video.Status.PENDING if file else Video.Status.EXTERNAL,
        )
        if file:
            video.file.save(safe_filename(file.name), file, save=False)
        video.save()
        if file:
            from .tasks import process_video

            transaction.on_commit(lambda: process_video.delay(video.pk))
    return video
