"""Probing videos and making thumbnails with ffmpeg.

Only the ``ffmpeg`` binary of the imageio-ffmpeg wheel is available (no ffprobe), so ``probe`` reads what
``ffmpeg -hide_banner -i PATH`` prints on stderr: the container's ``Duration: HH:MM:SS.ss`` and the first video
stream's ``WIDTHxHEIGHT``. ``process_video`` works on any Django storage: a file with a local path (the file
system) is read in place, any other (S3) is first copied to a temporary file. Every ffmpeg call has a timeout.
"""

import logging
import os
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.core.files.base import ContentFile

from .models import Video
from .synthetic import ffmpeg_exe

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 60  # seconds; reading the header of a file
DECODE_TIMEOUT = 300  # seconds; decoding a whole file when its header has no duration
THUMBNAIL_TIMEOUT = 120  # seconds; seeking to one frame and encoding it
THUMBNAIL_WIDTH = 320
THUMBNAIL_AT = 0.1  # share of the duration where the thumbnail frame is taken

_DURATION = re.compile(r"Duration:\s*(\d+):(\d{2}):(\d{2}(?:\.\d+)?)")
_VIDEO_STREAM = re.compile(r"\s*Stream #\d+:\d+.*?: Video: ")
_SIZE = re.compile(r"(?<=[\s,])(\d{1,5})x(\d{1,5})(?![\w.])")  # ", 1920x1080," (not "[0x1]", "0x31637661")
_ROTATION = re.compile(r"rotation of (-?\d+(?:\.\d+)?) degrees")
_PROGRESS_TIME = re.compile(r"time=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)")


class VideoProcessingError(Exception):
    """The file cannot be read as a video (or ffmpeg failed on it); the message says why."""


@dataclass(frozen=True)
class VideoInfo:
    duration: float  # seconds
    width: int
    height: int


def _run(arguments, timeout, *, text=True):
    command = [ffmpeg_exe(), "-nostdin", "-hide_banner", *arguments]
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout, text=text)
    except subprocess.TimeoutExpired:
        raise VideoProcessingError(f"ffmpeg took longer than {timeout} s") from None


def _seconds(match):
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def _last_line(stderr):
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def probe(path):
    """Duration (seconds) and frame size of the video at ``path``; VideoProcessingError if it is not a video."""
    stderr = _run(["-i", str(path)], PROBE_TIMEOUT).stderr
    seconds, width, height = parse_header(stderr)
    if seconds is None:
        seconds = _decoded_duration(path)
    if seconds <= 0:
        raise VideoProcessingError(f"implausible duration: {seconds} s")
    return VideoInfo(duration=round(seconds, 3), width=width, height=height)


def parse_header(stderr):
    """``(seconds or None, width, height)`` from what ``ffmpeg -i`` prints about its input. The size is the
    first real video stream's (not cover art), as displayed: a stream rotated by 90 degrees swaps it."""
    if "Input #0" not in stderr:  # ffmpeg could not open it as media at all
        raise VideoProcessingError(f"not a readable video file ({_last_line(stderr)})")
    blocks = re.split(r"(?m)^(?=\s*Stream #)", stderr)
    streams = [b for b in blocks[1:] if _VIDEO_STREAM.match(b) and "(attached pic)" not in b.splitlines()[0]]
    size = _SIZE.search(streams[0].splitlines()[0].partition(": Video: ")[2]) if streams else None
    if size is None:
        raise VideoProcessingError("the file has no video stream")
    width, height = int(size.group(1)), int(size.group(2))
    rotation = _ROTATION.search(streams[0])
    if rotation and round(abs(float(rotation.group(1)))) % 180 == 90:  # phone videos filmed upright
        width, height = height, width
    if width <= 0 or height <= 0:
        raise VideoProcessingError(f"implausible frame size {width}x{height}")
    duration = _DURATION.search(blocks[0])
    return (_seconds(duration) if duration else None), width, height


def _decoded_duration(path):
    """The duration of a file whose header does not give one (e.g. a WebM written by a browser): copy the
    video stream to nowhere and read ffmpeg's last progress time."""
    result = _run(["-i", str(path), "-map", "0:v:0", "-c", "copy", "-f", "null", "-"], DECODE_TIMEOUT)
    times = _PROGRESS_TIME.findall(result.stderr)
    if result.returncode != 0 or not times:
        raise VideoProcessingError(f"cannot tell the duration ({_last_line(result.stderr)})")
    hours, minutes, seconds = times[-1]
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def make_thumbnail(path, at_seconds=0.0, *, width=THUMBNAIL_WIDTH):
    """A JPEG (bytes) of the frame at ``at_seconds``, scaled to ``width`` pixels wide (aspect ratio kept)."""

    def grab(seconds):
        result = _run(
            [
                "-loglevel",
                "error",
                "-ss",
                f"{max(seconds, 0):.3f}",
                "-i",
                str(path),
                "-frames:v",
                "1",
                "-vf",
                f"scale={width}:-2",
                "-c:v",
                "mjpeg",
                "-q:v",
                "4",
                "-f",
                "image2pipe",
                "-",
            ],
            THUMBNAIL_TIMEOUT,
            text=False,
        )
        return result.stdout, _last_line(result.stderr.decode(errors="replace"))

    image, message = grab(at_seconds)
    if not image and at_seconds > 0:  # seeking past the last frame gives nothing: take the first one
        image, message = grab(0)
    if not image.startswith(b"\xff\xd8"):
        raise VideoProcessingError(f"no thumbnail frame ({message})")
    return image


@contextmanager
def local_path(field_file):
    """A path on the local disk for a stored file: its own path on the file system, otherwise (S3) a
    temporary copy, removed afterwards. A file missing from storage raises OSError (FileNotFoundError)."""
    try:
        path = field_file.path
    except NotImplementedError:  # storages without local files (S3)
        path = None
    if path and os.path.isfile(path):  # (InMemoryStorage has a path, but nothing is there)
        yield path
        return
    suffix = PurePosixPath(field_file.name).suffix
    with tempfile.NamedTemporaryFile(suffix=suffix, prefix="captioneval-video-") as copy:
        with field_file.storage.open(field_file.name, "rb") as source:
            shutil.copyfileobj(source, copy, 1024 * 1024)
        copy.flush()
        yield copy.name


def process_video(video):
    """Probe ``video``'s stored file and store its thumbnail; mark it READY, or FAILED with the reason.

    Never raises because of the file's content (the failure is recorded and logged). Safe to run again: the
    previous thumbnail is replaced. A video deleted meanwhile is left deleted (its new thumbnail removed)."""
    if not video.file:
        return video
    try:
        with local_path(video.file) as path:
            info = probe(path)
            image = make_thumbnail(path, info.duration * THUMBNAIL_AT)
    except FileNotFoundError:
        logger.warning("video %s: file %s is missing from storage", video.pk, video.file.name)
        return _failed(video, f"the video file {video.file.name} is missing from storage")
    except (VideoProcessingError, OSError) as exc:
        logger.warning("video %s (%s): processing failed: %s", video.pk, video.file.name, exc)
        return _failed(video, str(exc) or exc.__class__.__name__)
    except Exception as exc:  # storage errors and the like: record them too, so the video is not stuck
        logger.exception("video %s (%s): processing failed", video.pk, video.file.name)
        return _failed(video, f"{exc.__class__.__name__}: {exc}")

    storage = video.thumbnail.storage
    old_thumbnail = video.thumbnail.name or ""
    video.thumbnail.save(f"{PurePosixPath(video.file.name).stem}.jpg", ContentFile(image), save=False)
    stored = _update(
        video,
        duration=info.duration,
        width=info.width,
        height=info.height,
        thumbnail=video.thumbnail.name,
        status=Video.Status.READY,
        processing_error="",
    )
    if not stored:  # the video was deleted meanwhile
        _delete_quietly(storage, video.thumbnail.name)
    elif old_thumbnail != video.thumbnail.name:  # (a storage that overwrites may reuse the name)
        _delete_quietly(storage, old_thumbnail)
    if stored:
        logger.info("video %s: %.2f s, %dx%d", video.pk, info.duration, info.width, info.height)
    return video


def _failed(video, message):
    _update(video, status=Video.Status.FAILED, processing_error=message[:2000])
    return video


def _update(video, **fields):
    """Write ``fields`` to the video's row and instance; False when the row no longer exists."""
    for name, value in fields.items():
        setattr(video, name, value)
    return Video.objects.filter(pk=video.pk).update(**fields) == 1


def _delete_quietly(storage, name):
    if not name:
        return
    try:
        storage.delete(name)
    except Exception:  # a leftover thumbnail is not worth failing the processing for
        logger.warning("could not delete thumbnail %s", name, exc_info=True)
