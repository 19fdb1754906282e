"""video_processing: probing generated videos (the reference is what ffmpeg was asked to make), thumbnails,
and process_video on stored files (local, storage without local paths, bad files, re-runs, timeouts)."""

import os
import subprocess

import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation_site.corpus import synthetic, tasks, video_processing
from annotation_site.corpus.models import Dataset, Video
from annotation_site.corpus.video_processing import VideoProcessingError, make_thumbnail, parse_header, probe


@pytest.mark.parametrize(
    "pattern, seconds, size",
    [
        ("testsrc2", 2.0, "320x180"),
        ("smptebars", 3.5, "640x360"),
        ("life", 1.2, "176x144"),
        ("rgbtestsrc", 2.4, "240x320"),
    ],
)
def test_probe_gives_the_requested_duration_and_size(make_webm, pattern, seconds, size):
    info = probe(make_webm(seconds, pattern, size))
    assert info.duration == pytest.approx(seconds, abs=0.1)
    assert f"{info.width}x{info.height}" == size


def test_probe_reads_the_duration_of_a_file_whose_header_has_none(make_webm, tmp_path):
    live = tmp_path / "live.webm"  # a live-streaming WebM (as browsers record) has no duration in its header
    subprocess.run(
        [
            synthetic.ffmpeg_exe(),
            "-nostdin",
            "-loglevel",
            "error",
            "-i",
            str(make_webm(3.0)),
            "-c",
            "copy",
            "-f",
            "webm",
            "-live",
            "1",
            str(live),
        ],
        check=True,
        timeout=60,
    )
    header = subprocess.run([synthetic.ffmpeg_exe(), "-hide_banner", "-i", str(live)], capture_output=True, text=True)
    assert "Duration: N/A" in header.stderr  # otherwise this test would not test the fallback
    info = probe(live)
    assert info.duration == pytest.approx(3.0, abs=0.1)
    assert (info.width, info.height) == (320, 180)


def test_probe_rejects_a_file_that_is_not_a_video(tmp_path):
    text = tmp_path / "notes.webm"
    text.write_text("these are notes, not a video\n" * 20)
    with pytest.raises(VideoProcessingError, match="not a readable video"):
        probe(text)


def test_probe_rejects_audio_without_video(tmp_path):
    audio = tmp_path / "sound.ogg"
    subprocess.run(
        [
            synthetic.ffmpeg_exe(),
            "-nostdin",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=1",
            "-c:a",
            "libvorbis",
            str(audio),
        ],
        check=True,
        timeout=60,
    )
    with pytest.raises(VideoProcessingError, match="no video stream"):
        probe(audio)


PHONE_MP4 = """Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'phone.mp4':
  Metadata:
    major_brand     : isom
    creation_time   : 2023-05-01T10:00:00.000000Z
  Duration: 00:01:02.35, start: 0.000000, bitrate: 17000 kb/s
  Stream #0:0[0x1](eng): Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709, progressive), 1920x1080, 16800 kb/s, SAR 1:1 DAR 16:9, 29.97 fps, 29.97 tbr, 90k tbn (default)
    Metadata:
      handler_name    : VideoHandle
    Side data:
      displaymatrix: rotation of -90.00 degrees
  Stream #0:1[0x2](eng): Audio: aac (LC) (mp4a / 0x6134706D), 48000 Hz, stereo, fltp, 192 kb/s (default)
At least one output file must be specified
"""

SONG_WITH_COVER = """Input #0, mp3, from 'song.mp3':
  Duration: 00:03:10.00, start: 0.025056, bitrate: 320 kb/s
  Stream #0:0: Audio: mp3 (mp3float), 44100 Hz, stereo, fltp, 320 kb/s
  Stream #0:1: Video: mjpeg (Baseline), yuvj420p(pc, bt470bg/unknown/unknown), 600x600 [SAR 1:1 DAR 1:1], 90k tbr, 90k tbn (attached pic)
At least one output file must be specified
"""

STREAMED_HEVC = """Input #0, matroska,webm, from 'stream.mkv':
  Duration: N/A, start: 0.000000, bitrate: N/A
  Stream #0:0: Video: hevc (Main) (hev1 / 0x31766568), yuv420p(tv), 3840x2160 [SAR 1:1 DAR 16:9], 25 fps, 25 tbr, 1k tbn
At least one output file must be specified
"""


def test_header_of_a_rotated_phone_video_gives_the_displayed_size():
    assert parse_header(PHONE_MP4) == (62.35, 1080, 1920)  # 1 min 2.35 s, filmed upright


def test_header_without_duration_leaves_it_to_decoding():
    assert parse_header(STREAMED_HEVC) == (None, 3840, 2160)


def test_cover_art_is_not_a_video_stream():
    with pytest.raises(VideoProcessingError, match="no video stream"):
        parse_header(SONG_WITH_COVER)


@pytest.mark.parametrize("size, expected", [("640x360", (320, 180)), ("320x180", (320, 180)), ("176x144", (320, 262))])
def test_thumbnail_is_a_jpeg_320_wide(make_webm, read_jpeg_size, size, expected):
    image = make_thumbnail(make_webm(2.0, "smptebars", size), 0.2)
    assert image[:2] == b"\xff\xd8"
    assert read_jpeg_size(image) == expected  # 144 * 320 / 176 = 261.8, rounded to an even height


def test_thumbnail_is_taken_at_the_requested_time(make_webm):
    path = make_webm(2.0, "testsrc2")  # testsrc2 moves and shows a running clock
    assert make_thumbnail(path, 0.0) != make_thumbnail(path, 1.5)


def test_thumbnail_past_the_end_falls_back_to_the_first_frame(make_webm):
    path = make_webm(2.0, "testsrc2")
    assert make_thumbnail(path, 60.0) == make_thumbnail(path, 0.0)


def _stored_video(path, external_id="clip", name="clip.webm"):
    dataset, _ = Dataset.objects.get_or_create(name="processing")
    video = Video(dataset=dataset, external_id=external_id, status=Video.Status.PENDING)
    with open(path, "rb") as handle:
        video.file.save(name, File(handle), save=True)
    return video


@pytest.mark.django_db
def test_process_video_sets_metadata_and_thumbnail(make_webm, read_jpeg_size):
    video = _stored_video(make_webm(3.5, "smptebars", "640x360"))
    video_processing.process_video(video)
    video = Video.objects.get(pk=video.pk)
    assert video.status == Video.Status.READY and video.processing_error == ""
    assert video.duration == pytest.approx(3.5, abs=0.1)
    assert (video.width, video.height) == (640, 360)
    with default_storage.open(video.thumbnail.name, "rb") as handle:
        assert read_jpeg_size(handle.read()) == (320, 180)


@pytest.mark.django_db
def test_process_video_twice_replaces_the_thumbnail(make_webm):
    video = _stored_video(make_webm(2.0), external_id="twice", name="twice.webm")
    video_processing.process_video(video)
    first = Video.objects.get(pk=video.pk).thumbnail.name
    video_processing.process_video(Video.objects.get(pk=video.pk))
    video = Video.objects.get(pk=video.pk)
    assert video.status == Video.Status.READY
    assert default_storage.exists(video.thumbnail.name)
    assert not default_storage.exists(first)  # the old thumbnail is gone, not left behind
    folder = video.thumbnail.name.rpartition("/")[0]
    assert [f for f in default_storage.listdir(folder)[1] if f.startswith("twice")] == [
        video.thumbnail.name.rpartition("/")[2]
    ]


@pytest.mark.django_db
def test_process_video_marks_a_bad_file_failed_without_raising():
    dataset = Dataset.objects.create(name="bad")
    video = Video(dataset=dataset, external_id="bad", status=Video.Status.PENDING)
    video.file.save("bad.mp4", ContentFile(b"<html>not a video</html>" * 50), save=True)
    video_processing.process_video(video)
    video = Video.objects.get(pk=video.pk)
    assert video.status == Video.Status.FAILED
    assert "not a readable video" in video.processing_error
    assert video.duration is None and not video.thumbnail


@pytest.mark.django_db
def test_a_video_deleted_during_processing_stays_deleted(make_webm):
    video = _stored_video(make_webm(2.0), external_id="deleted", name="deleted-meanwhile.webm")
    Video.objects.filter(pk=video.pk).delete()  # e.g. its dataset was deleted while the task ran
    video_processing.process_video(video)
    assert not Video.objects.filter(pk=video.pk).exists()
    folder = video.thumbnail.field.generate_filename(video, "x.jpg").rpartition("/")[0]
    thumbnails = default_storage.listdir(folder)[1] if default_storage.exists(folder) else []
    assert not [name for name in thumbnails if name.startswith("deleted-meanwhile")]  # none left behind


@pytest.mark.django_db
def test_process_video_marks_a_missing_file_failed(make_webm):
    video = _stored_video(make_webm(2.0), external_id="gone", name="gone.webm")
    default_storage.delete(video.file.name)
    video_processing.process_video(video)
    video.refresh_from_db()
    assert video.status == Video.Status.FAILED
    assert video.processing_error == f"the video file {video.file.name} is missing from storage"


@pytest.mark.django_db
def test_process_video_copies_files_from_storage_without_local_paths(make_webm, settings):
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"}}
    video = _stored_video(make_webm(2.4, "rgbtestsrc", "240x320"), external_id="memory", name="memory.webm")
    try:
        assert not os.path.exists(video.file.path)  # the storage really keeps nothing on disk
    except NotImplementedError:
        pass
    video_processing.process_video(video)
    video.refresh_from_db()
    assert video.status == Video.Status.READY, video.processing_error
    assert video.duration == pytest.approx(2.4, abs=0.1) and (video.width, video.height) == (240, 320)
    assert video.thumbnail.storage.open(video.thumbnail.name).read(2) == b"\xff\xd8"


@pytest.mark.django_db
def test_a_hanging_ffmpeg_is_stopped_by_the_timeout(make_webm, monkeypatch):
    video = _stored_video(make_webm(2.0), external_id="slow", name="slow.webm")
    monkeypatch.setattr(video_processing, "PROBE_TIMEOUT", 0.001)
    video_processing.process_video(video)
    video.refresh_from_db()
    assert video.status == Video.Status.FAILED
    assert "longer than" in video.processing_error


@pytest.mark.django_db
def test_the_task_processes_by_primary_key(make_webm, eager_tasks):
    video = _stored_video(make_webm(2.0), external_id="task", name="task.webm")
    assert tasks.process_video.delay(video.pk).get() == Video.Status.READY
    assert Video.objects.get(pk=video.pk).duration == pytest.approx(2.0, abs=0.1)
    assert tasks.process_video.delay(10**9).get() is None  # a deleted video: nothing to do
