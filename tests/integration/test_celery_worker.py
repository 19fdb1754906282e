"""A video file added through the service is processed by Celery: by a real worker consuming from the broker
when CELERY_BROKER_URL is set, eagerly in the web process on the embedded default."""

import threading

import pytest
from celery.signals import task_prerun
from django.core.files import File

from annotation_site.corpus import services, synthetic
from annotation_site.corpus.models import Dataset, Video
from tests.conftest import wait_until

pytestmark = pytest.mark.integration


def test_an_added_video_file_is_processed(celery_worker, transactional_db, tmp_path, settings):
    clip = synthetic.make_video(tmp_path / "worker.webm", seconds=2.6, pattern="cellauto", size="256x144")
    dataset = Dataset.objects.create(name="celery")
    ran_in = []

    def record(sender=None, args=(), **kwargs):
        if sender.name == "annotation_site.corpus.tasks.process_video":
            ran_in.append((tuple(args), threading.get_ident()))

    task_prerun.connect(record, weak=False)
    try:
        with open(clip, "rb") as handle:
            video = services.add_video(dataset, "worker-clip", file=File(handle, name="worker.webm"))
        wait_until(
            lambda: Video.objects.filter(pk=video.pk).exclude(status=Video.Status.PENDING).exists(),
            timeout=60,
            what="the video to be processed",
        )
    finally:
        task_prerun.disconnect(record)

    video = Video.objects.get(pk=video.pk)
    assert video.status == Video.Status.READY, video.processing_error
    assert video.duration == pytest.approx(2.6, abs=0.1)
    assert (video.width, video.height) == (256, 144)
    assert video.thumbnail and video.thumbnail.storage.exists(video.thumbnail.name)
    threads = [thread for args, thread in ran_in if args == (video.pk,)]  # (ignore stale broker messages)
    assert len(threads) == 1
    if celery_worker is None:  # embedded default: eager, in this thread, when the row was committed
        assert settings.CELERY_TASK_ALWAYS_EAGER and threads[0] == threading.get_ident()
    else:  # a real worker took the message from the broker
        assert threads[0] != threading.get_ident()
