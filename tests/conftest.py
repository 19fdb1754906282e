"""Shared test fixtures.

- Strict mode (``CAPTIONEVAL_STRICT=1``, set by CI): a test that would be skipped fails instead, so a missing
  part (Chromium, PostgreSQL, the shared datasets...) can never pass unnoticed.
- Media go to a temporary folder for the whole session (live servers included).
- ``celery_worker``: when ``CELERY_BROKER_URL`` is set, a real Celery worker consuming from that broker runs
  for the session (tests that use it need ``transactional_db`` so the worker sees their rows); on the
  embedded default tasks run eagerly and the fixture yields None.
- ``celery_worker`` and ``live_server`` end a test only once the worker and the server have finished its work, and
  refuse the server's later requests, so that none runs while the database is emptied (tests/quiet_teardown.py).
- ``browser`` / ``page``: Playwright driving Debian's /usr/bin/chromium (never a downloaded browser).
- Personas for permission tests: ``staff_researcher``, ``annotator``, ``other_annotator``, ``crowd_worker``,
  ``outsider`` (each a ``Persona`` with ``user``, a logged-in page ``client`` and ``api`` client).
"""

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.quiet_teardown import ServerGate, TaskLedger

# Playwright's sync API runs an event loop in the test thread; Django would refuse ORM calls next to it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

STRICT = os.environ.get("CAPTIONEVAL_STRICT", "") not in ("", "0", "false")
REPO = Path(__file__).resolve().parent.parent
SHARED_DATASETS = Path(os.environ.get("CAPTIONEVAL_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHROMIUM = os.environ.get("CAPTIONEVAL_CHROMIUM", "/usr/bin/chromium")
QUIET_TEARDOWN_SECONDS = 60  # how long a test's end waits for its requests and tasks to finish


def require(available, what):
    """Skip (fail, in strict mode) when an outside part is truly absent, saying which."""
    if not available:
        pytest.skip(f"needs {what}, which is not available here")


def redis_answers(url):
    """Whether a Redis server answers PING at ``url`` (redis://host:port/db)."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in strict mode (CAPTIONEVAL_STRICT=1): {reason}"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Every test starts with empty throttle counts (all test clients share the address 127.0.0.1)."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def _session_media_root():
    from django.test.utils import override_settings

    media = tempfile.mkdtemp(prefix="captioneval-media-")
    with override_settings(MEDIA_ROOT=Path(media)):
        yield Path(media)
    shutil.rmtree(media, ignore_errors=True)


@pytest.fixture
def shared_datasets():
    """The FactVC release folder beside the repository (skips when absent)."""
    path = SHARED_DATASETS / "factvc"
    require((path / "activitynet" / "factuality_annotation.json").is_file(), f"the shared datasets at {path}")
    return path


def import_factvc(folder, name):
    """Import a FactVC release folder (one of ``shared_datasets``, or a fixture) as dataset ``name`` with the
    import_dataset command, its output kept off the test's."""
    import io

    from django.core.management import call_command

    call_command(
        "import_dataset", "--format", "factvc", "--name", name, str(folder), stdout=io.StringIO(), stderr=io.StringIO()
    )


@pytest.fixture(scope="session")
def _celery_worker_session(django_db_setup, django_db_blocker):
    """The session's worker (None on the embedded default) and the ledger of the tasks it still owes."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        yield None, None
        return
    from celery.contrib.testing.worker import start_worker
    from celery.signals import after_task_publish, task_postrun
    from django.db import connections

    from annotation_site.celery import app

    def close_connections(**kwargs):
        connections.close_all()  # the test database is dropped at the end; leave no connection open to it

    task_postrun.connect(close_connections, weak=False)
    app.control.purge()  # messages left by an interrupted earlier run point at rows of another test database
    with django_db_blocker.unblock():
        with start_worker(
            app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30
        ) as worker:
            consumed = app.amqp.queues.consume_from.items()
            ledger = TaskLedger({key for name, queue in consumed for key in (name, queue.routing_key) if key})
            after_task_publish.connect(ledger.published, weak=False)
            task_postrun.connect(ledger.finished, weak=False)
            yield worker, ledger
            after_task_publish.disconnect(ledger.published)
            task_postrun.disconnect(ledger.finished)
    task_postrun.disconnect(close_connections)


@pytest.fixture
def celery_worker(request, _celery_worker_session):
    """The session's real Celery worker, or None when tasks run eagerly. The test ends only once the worker has
    run every task sent so far (tests/quiet_teardown.py): none of them may run while the database is emptied."""
    worker, ledger = _celery_worker_session
    if worker is None:
        yield None
        return
    request.getfixturevalue("db")  # the test's database fixture (transactional or not) is torn down after this one
    yield worker
    left = ledger.wait(QUIET_TEARDOWN_SECONDS)
    if left:
        pytest.fail(
            f"the Celery worker had not run {len(left)} task(s) {QUIET_TEARDOWN_SECONDS} s after the test: {left}"
        )


@pytest.fixture(scope="session")
def _live_server_session(request):
    """pytest-django's live server, started the way its own ``live_server`` fixture starts it (same address rules);
    tests/browser/conftest.py starts it with production media serving instead."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer(
        request.config.getvalue("liveserver") or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost"
    )
    yield server
    server.stop()


@pytest.fixture
def live_server(_live_server_session, transactional_db):
    """The session's live server, open to this test's requests only: at the end of the test it waits for the
    requests in flight and answers later ones 503 until the next test opens it, so that none runs while the
    database is emptied (tests/quiet_teardown.py)."""
    gate = ServerGate.around(_live_server_session.thread.httpd)
    gate.open()
    yield _live_server_session
    left = gate.close(QUIET_TEARDOWN_SECONDS)
    if left:
        pytest.fail(f"the live server still had {left} request(s) in flight {QUIET_TEARDOWN_SECONDS} s after the test")


@pytest.fixture(scope="session")
def browser():
    require(Path(CHROMIUM).is_file(), f"Chromium at {CHROMIUM} (Debian packages chromium, chromium-driver)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


# --- Personas: who uses the platform. Permission tests take these rather than making their own accounts. -------


@dataclass
class Persona:
    """Someone using the platform: their account (None for a crowd worker, who comes by a signed link), a page
    client and an API client already logged in as them, and the id a crowd platform gives them."""

    name: str
    user: Any
    client: Any
    api: Any
    external_id: str = ""


def _persona(name, user, external_id=""):
    from django.test import Client
    from rest_framework.test import APIClient

    client, api = Client(), APIClient()
    if user is not None:
        client.force_login(user)
        api.force_authenticate(user)
    return Persona(name, user, client, api, external_id)


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("researcher", "r@example.org", "pw-researcher-1", is_staff=True)


@pytest.fixture
def staff_researcher(staff_user):
    """A researcher: a staff account (every researcher page and API)."""
    return _persona("staff researcher", staff_user)


def _annotator(django_user_model, username):
    from annotation_site.annotators.services import annotator_for_user

    user = django_user_model.objects.create_user(username, f"{username}@example.org", f"pw-{username}-123")
    annotator_for_user(user)  # an invited annotator's profile: their own queues, nothing of the researchers'
    return _persona(username, user)


@pytest.fixture
def annotator(django_user_model):
    """An annotator: an invited, non-staff account with an annotator profile."""
    return _annotator(django_user_model, "annotator")


@pytest.fixture
def other_annotator(django_user_model):
    """A second annotator, to check that nobody sees or submits another's assignments."""
    return _annotator(django_user_model, "other-annotator")


@pytest.fixture
def crowd_worker(db):
    """A crowd worker: no account, known by the platform's worker id, reaching work through signed links."""
    return _persona("crowd worker", None, external_id="CROWD-WORKER-1")


@pytest.fixture
def outsider(django_user_model):
    """A logged-in account with no role: neither staff nor annotator."""
    user = django_user_model.objects.create_user("outsider", "o@example.org", "pw-outsider-123")
    return _persona("outsider", user)


@pytest.fixture
def annotator_accounts(db, django_user_model):
    """``annotator_accounts(n)``: n invited annotators ann1..annN (accounts with password "pw-<name>-1") and
    their Annotators, for tests that need a crowd of annotators doing the work; who may do what is the
    personas' business."""
    from annotation_site.annotators.services import invite

    def make(n, prefix="ann"):
        made = []
        for i in range(1, n + 1):
            name = f"{prefix}{i}"
            if not django_user_model.objects.filter(username=name).exists():
                django_user_model.objects.create_user(name, f"{name}@example.org", f"pw-{name}-1")
            made.append(invite(name)[0])
        return made

    return make


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


def wait_until(predicate, *, timeout=60.0, interval=0.1, what="condition"):
    """Poll ``predicate`` until it returns something truthy (work done by a Celery worker shows up in the DB).

    On the embedded default a job runs in a thread of this process (``jobs.services.enqueue_off_request``, named
    ``job-<id>``): such threads are waited for first, so the test does not read the database while a job writes
    it. Django's in-memory SQLite test database shares one cache between threads, and there a write that meets
    a reader fails at once ("database table is locked") instead of waiting as production's file database does:
    the job then failed, and the test with it, now and then."""
    import threading
    import time

    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name.startswith("job-") and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
