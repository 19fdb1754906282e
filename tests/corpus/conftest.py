"""Fixtures of the corpus tests: generated videos (made once per session) and eager Celery tasks."""

import struct

import pytest

from annotation_site.corpus import synthetic


@pytest.fixture(scope="session")
def make_webm(tmp_path_factory):
    """``make_webm(seconds, pattern, size)``: the path of a generated WebM test-pattern video (cached)."""
    folder = tmp_path_factory.mktemp("videos")
    made = {}

    def make(seconds=2.0, pattern="testsrc2", size="320x180"):
        key = (seconds, pattern, size)
        if key not in made:
            made[key] = synthetic.make_video(
                folder / f"{pattern}-{seconds}-{size}.webm", seconds=seconds, pattern=pattern, size=size
            )
        return made[key]

    return make


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in the calling thread for this test, whatever CELERY_BROKER_URL says (these tests check
    what the task does, not the broker; tests/integration/test_celery_worker.py covers the worker)."""
    from annotation_site.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


def jpeg_size(data):
    """(width, height) from a JPEG's start-of-frame marker, read independently of any code under test."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    i = 2
    while i < len(data):
        assert data[i] == 0xFF, f"bad JPEG marker at {i}"
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    raise AssertionError("no start-of-frame marker in the JPEG")


@pytest.fixture
def read_jpeg_size():
    return jpeg_size
