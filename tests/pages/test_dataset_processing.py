"""Processing a dataset's video files from its page: the button, the job and its progress."""

import pytest
from django.core.files.base import ContentFile

from annotation_site.corpus.models import Dataset, Video
from annotation_site.corpus.synthetic import make_video
from annotation_site.jobs.models import Job
from tests.conftest import wait_until


def stored_video(dataset, external_id, path, status):
    video = Video(dataset=dataset, external_id=external_id, status=status)
    video.file.save(path.name, ContentFile(path.read_bytes()), save=True)
    return video


@pytest.mark.django_db(transaction=True)
def test_process_button_runs_a_job_whose_progress_the_page_shows(client, staff_user, tmp_path, celery_worker):
    client.force_login(staff_user)
    dataset = Dataset.objects.create(name="clips")
    good = stored_video(dataset, "good", make_video(tmp_path / "good.webm", seconds=1.2), Video.Status.PENDING)
    (tmp_path / "broken.webm").write_bytes(b"not a video at all")
    broken = stored_video(dataset, "broken", tmp_path / "broken.webm", Video.Status.PENDING)
    stored_video(dataset, "done", make_video(tmp_path / "done.webm", seconds=1.0), Video.Status.READY)

    page = client.get("/datasets/clips/").content.decode()
    assert "Process 2 video files" in page and 'class="job-progress"' not in page

    response = client.post("/datasets/clips/process-videos/")
    assert response.status_code == 302
    job = wait_until(
        lambda: Job.objects.filter(scope=f"dataset:{dataset.pk}", status="succeeded").first(), what="the processing job"
    )
    assert (job.done, job.total, job.result) == (2, 2, {"processed": 2, "failed": 1})
    good.refresh_from_db()
    broken.refresh_from_db()
    assert good.status == "ready" and good.duration == pytest.approx(1.2, abs=0.1)
    assert broken.status == "failed"

    page = client.get("/datasets/clips/").content.decode()
    assert f'data-job-url="/api/jobs/{job.pk}/"' in page
    assert "1 ready, 1 failed" in page
    assert "Process 1 video file<" in page  # the failed one can be retried


@pytest.mark.django_db
def test_processing_needs_staff_and_post(annotator, outsider, staff_researcher):
    Dataset.objects.create(name="clips")
    for persona in (annotator, outsider):
        assert persona.client.post("/datasets/clips/process-videos/").status_code == 302  # to the staff login
    assert not Job.objects.exists()
    assert staff_researcher.client.get("/datasets/clips/process-videos/").status_code == 405
