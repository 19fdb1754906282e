"""attach_videos: a folder of clips attached to an imported dataset by id, then processed as one job."""

import io

import pytest
from django.core.management import CommandError, call_command

from annotation_site.corpus.models import Video
from annotation_site.corpus.synthetic import make_video
from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle
from annotation_site.jobs.models import Job
from tests.conftest import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    text = "".join(
        f'{{"type": "video", "video_id": "{vid}", "url": "https://www.youtube.com/watch?v={vid[-11:]}"}}\n'
        for vid in ("v_AAAAAAAAAAA", "v_BBBBBBBBBBB", "v_CCCCCCCCCCC")
    )
    return import_bundle(jsonl.read(text), name="clips", source_format="jsonl").dataset


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("attach_videos", *args, stdout=out, stderr=err)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_attaches_by_id_with_or_without_v_prefix_and_processes(dataset, tmp_path, celery_worker):
    """Runs the processing job eagerly on the embedded default, on a real worker when a broker is configured."""
    make_video(tmp_path / "v_AAAAAAAAAAA.webm", seconds=1.5)
    make_video(tmp_path / "BBBBBBBBBBB.webm", seconds=2.5)
    (tmp_path / "notes.txt").write_text("not a video")
    make_video(tmp_path / "v_ZZZZZZZZZZZ.webm", seconds=1.0)
    out = run(str(tmp_path), "--name", "clips")
    assert "2 files match, 1 videos have no file, 1 files match no video" in out
    job = wait_until(
        lambda: Job.objects.filter(scope=f"dataset:{dataset.pk}", status="succeeded").first(), what="the processing job"
    )
    assert (job.done, job.total, job.result) == (2, 2, {"processed": 2, "failed": 0})
    videos = {v.external_id: v for v in Video.objects.filter(dataset=dataset)}
    a, b, c = videos["v_AAAAAAAAAAA"], videos["v_BBBBBBBBBBB"], videos["v_CCCCCCCCCCC"]
    assert a.file and a.url == "" and a.status == Video.Status.READY and a.duration == pytest.approx(1.5, abs=0.1)
    assert b.file and b.duration == pytest.approx(2.5, abs=0.1)
    assert not c.file and c.kind == "youtube"


def test_dry_run_changes_nothing(dataset, tmp_path):
    make_video(tmp_path / "v_AAAAAAAAAAA.webm", seconds=1.0)
    assert "1 files match" in run(str(tmp_path), "--name", "clips", "--dry-run")
    assert not Video.objects.exclude(file="").exists()
    assert not Job.objects.exists()


def test_ambiguous_files_are_refused_before_anything_is_copied(dataset, tmp_path):
    make_video(tmp_path / "v_AAAAAAAAAAA.webm", seconds=1.0)
    make_video(tmp_path / "v_AAAAAAAAAAA.mp4".replace(".mp4", ".mkv"), seconds=1.0)
    with pytest.raises(CommandError, match="several files match"):
        run(str(tmp_path), "--name", "clips")
    assert not Video.objects.exclude(file="").exists()


def test_existing_files_are_kept_unless_replace(dataset, tmp_path):
    make_video(tmp_path / "v_AAAAAAAAAAA.webm", seconds=1.0)
    run(str(tmp_path), "--name", "clips")
    first = Video.objects.get(external_id="v_AAAAAAAAAAA").file.name
    assert "0 files match" in run(str(tmp_path), "--name", "clips")
    run(str(tmp_path), "--name", "clips", "--replace")
    assert Video.objects.get(external_id="v_AAAAAAAAAAA").file.name != first
