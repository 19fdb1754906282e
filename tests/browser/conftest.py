"""Fixtures of the browser tests: a live server with a staff user and a dataset holding one real (generated)
video file, added through the same service as the upload page, and a helper that logs in through the form."""

import dataclasses
import os
import threading
import time
from pathlib import Path

import pytest
from django.core.files import File
from django.core.handlers.wsgi import WSGIHandler
from django.db import connections
from django.test.testcases import LiveServerThread

from annotation_site.corpus import services, synthetic
from annotation_site.corpus.models import Caption, Dataset, Sentence, System
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel

REPO = Path(__file__).resolve().parent.parent.parent
ARTIFACTS = REPO / "test-artifacts"
CLIP_SECONDS = 12.0
DRAFT_HOLD_SECONDS = 2.0
# the annotator leaves the tab (or the minute autosave runs): the pages save a draft when they become hidden
HIDE_TAB = """() => {
  Object.defineProperty(document, "visibilityState", {configurable: true, get: () => "hidden"});
  document.dispatchEvent(new Event("visibilitychange"));
}"""
ANNOTATOR_PASSWORD = "pw-annotator-7"


class _ProductionMediaServerThread(LiveServerThread):
    """Django's live server thread, except that media requests reach the project's own middleware.

    Django's LiveServerThread wraps the site in a test-only media handler (django.views.static.serve), which
    ignores Range requests, so a browser cannot seek in a video there. In production the media are served by
    annotation_site.corpus.media.MediaFilesMiddleware (WhiteNoise, with Range), and that is what the player
    must work with, so this thread leaves media to the middleware. Static files are still served by the
    staticfiles handler, as pytest-django does."""

    def run(self):  # Django's LiveServerThread.run with the media handler left out
        if self.connections_override:
            for alias, conn in self.connections_override.items():
                connections[alias] = conn
        try:
            handler = self.static_handler(WSGIHandler())
            self.httpd = self._create_server(connections_override=self.connections_override)
            if self.port == 0:
                self.port = self.httpd.server_address[1]
            self.httpd.set_app(handler)
            self.is_ready.set()
            self.httpd.serve_forever()
        except Exception as exc:
            self.error = exc
            self.is_ready.set()
        finally:
            connections.close_all()


@pytest.fixture(scope="session")
def _live_server_session(request):
    """pytest-django's live server (same address rules), serving media the production way (see above); the
    ``live_server`` fixture of tests/conftest.py opens it to one test at a time."""
    from pytest_django.live_server_helper import LiveServer

    addr = request.config.getvalue("liveserver") or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost"
    server = LiveServer(addr, start=False)
    default = server.thread
    server.thread = _ProductionMediaServerThread(
        default.host,
        static_handler=default.static_handler,
        connections_override=default.connections_override,
        port=default.port,
    )
    server.thread.daemon = True
    server.start()
    yield server
    server.stop()


@pytest.fixture
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def clip_file(tmp_path_factory):
    """A 12 s WebM test pattern (25 frames/s), made once per session."""
    return synthetic.make_video(tmp_path_factory.mktemp("clips") / "pattern clip.webm", seconds=CLIP_SECONDS)


@pytest.fixture
def video_dataset(transactional_db, celery_worker, clip_file):
    """Dataset "player-demo" with one uploaded video "clip-01" and two captions on it (one labelled, with
    sentence times and an error span). The upload is probed by the processing task (eagerly, or by the real
    worker when a broker is configured)."""
    dataset = Dataset.objects.create(name="player-demo", description="One generated clip for the player test.")
    with open(clip_file, "rb") as handle:
        video = services.add_video(dataset, "clip-01", file=File(handle, name=clip_file.name))
    video.refresh_from_db()
    good = System.objects.create(dataset=dataset, name="ClipTrans", position=0)
    bad = System.objects.create(dataset=dataset, name="RetrievalBaseline", position=1)
    caption = Caption.objects.create(video=video, system=good, position=0)
    first = Sentence.objects.create(
        caption=caption, index=0, text="a colourful test card is shown .", start=0.0, end=4.0
    )
    second = Sentence.objects.create(
        caption=caption, index=1, text="a small square moves across the picture .", start=4.0, end=8.0
    )
    other = Caption.objects.create(video=video, system=bad, position=1)
    wrong = Sentence.objects.create(
        caption=other, index=0, text="a tv presenter stands in front of a wall .", start=2.0, end=6.0
    )
    labels = LabelSet.objects.create(dataset=dataset, name="imported", origin=LabelSet.Origin.IMPORTED)
    ParagraphLabel.objects.create(label_set=labels, caption=caption, score=5)
    ParagraphLabel.objects.create(label_set=labels, caption=other, score=2)
    for sentence in (first, second):
        SentenceLabel.objects.create(label_set=labels, sentence=sentence, error=False)
    wrong_label = SentenceLabel.objects.create(label_set=labels, sentence=wrong, error=True)
    ErrorSpan.objects.create(sentence_label=wrong_label, start=1, end=3)  # "tv presenter"
    return dataset


@pytest.fixture
def login(live_server, staff_user):
    """``login(page)``: log the staff user in through the login form; the page ends on the home page."""

    def log_in(page):
        page.goto(f"{live_server.url}/")
        assert page.url.startswith(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", "pw-researcher-1")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    return log_in


@pytest.fixture
def clip_dataset(transactional_db, celery_worker, clip_file, django_user_model):
    """The judgment tasks' dataset ("task-demo", one real clip "clip-01") and three annotator accounts ann1-ann3
    (password ANNOTATOR_PASSWORD)."""
    dataset = Dataset.objects.create(name="task-demo")
    with open(clip_file, "rb") as handle:
        services.add_video(dataset, "clip-01", file=File(handle, name=clip_file.name))
    for name in ("ann1", "ann2", "ann3"):
        django_user_model.objects.create_user(name, f"{name}@example.org", ANNOTATOR_PASSWORD)
    return dataset


@dataclasses.dataclass
class HeldDrafts:
    """The drafts a draft endpoint stored during a test (``bodies``, in order); ``stored`` is set once the first,
    held for DRAFT_HOLD_SECONDS before it is stored, is stored."""

    bodies: list = dataclasses.field(default_factory=list)
    stored: threading.Event = dataclasses.field(default_factory=threading.Event)
    started: bool = False

    def wait_for(self, count, timeout=10.0):
        deadline = time.monotonic() + timeout
        while len(self.bodies) < count:
            assert time.monotonic() < deadline, f"{len(self.bodies)} draft(s) stored, {count} expected"
            time.sleep(0.05)


@pytest.fixture
def hold_first_draft(monkeypatch):
    """``hold_first_draft(DraftView)`` -> HeldDrafts: the first draft PUT that view takes waits DRAFT_HOLD_SECONDS
    before it is stored, as the save a page sends when it is left can reach the server after the reloaded page's
    GET (the live server answers requests in threads, so the reload is served meanwhile)."""

    def hold(view):
        held = HeldDrafts()
        lock = threading.Lock()
        service = view.answers
        save = service.save_draft

        def save_draft(assignment, data):
            with lock:
                first, held.started = not held.started, True
            if first:
                time.sleep(DRAFT_HOLD_SECONDS)
            saved = save(assignment, data)
            held.bodies.append(data)
            if first:
                held.stored.set()
            return saved

        monkeypatch.setattr(view, "answers", dataclasses.replace(service, save_draft=save_draft))
        return held

    return hold
