"""The test suite's own guard (tests/quiet_teardown.py): a live server that is closed between two tests waits for
the requests in flight and refuses later ones without running them; the task ledger waits for the tasks that were
really sent, read from Celery's real signals."""

import threading
import urllib.error
import urllib.request
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from celery import Celery
from celery.signals import after_task_publish, task_postrun
from django.http import FileResponse

from tests.quiet_teardown import REFUSED, ServerGate, TaskLedger


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _ThreadedServer(WSGIServer):
    """wsgiref's server answering each request in its own thread, as the live server does."""

    def process_request(self, request, client_address):
        threading.Thread(target=self._answer, args=(request, client_address), daemon=True).start()

    def _answer(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


@pytest.fixture
def slow_server(tmp_path):
    """A server whose application holds each request until ``release`` is set, then sends the body in two parts;
    ``/file`` answers a FileResponse at once. ``calls`` lists the paths the application saw."""
    release, calls = threading.Event(), []
    (tmp_path / "clip.webm").write_bytes(b"x" * 10)

    def application(environ, start_response):
        calls.append(environ["PATH_INFO"])
        if environ["PATH_INFO"] == "/file":
            response = FileResponse(open(tmp_path / "clip.webm", "rb"))  # noqa: SIM115 (the response closes it)
            start_response("200 OK", list(response.items()))  # what Django's WSGIHandler does with it
            return response
        release.wait(30)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"first ", b"second"]

    server = make_server("127.0.0.1", 0, application, server_class=_ThreadedServer, handler_class=_Quiet)
    gate = ServerGate.around(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, gate, release, calls
    release.set()
    server.shutdown()
    server.server_close()


def fetch(server, path="/"):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}{path}", timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def in_background(function, *args):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", function(*args)), daemon=True)
    thread.start()
    return thread, result


def wait_for(predicate, seconds=10):
    done = threading.Event()
    for _ in range(int(seconds * 100)):
        if predicate():
            return True
        done.wait(0.01)
    return False


def test_the_gate_is_put_around_a_server_once(slow_server):
    server, gate, _, _ = slow_server
    assert ServerGate.around(server) is gate
    assert server.get_app() is gate


def test_closing_waits_for_a_request_in_flight_then_refuses_new_ones_without_running_them(slow_server):
    server, gate, release, calls = slow_server
    request, answer = in_background(fetch, server)
    assert wait_for(lambda: gate.in_flight == 1)

    assert gate.close(timeout=0.3) == 1  # still running: closing waited and says so
    closing, left = in_background(gate.close, 30)
    assert fetch(server, "/later") == (503, REFUSED)  # refused while closed ...
    assert calls == ["/"]  # ... and never reached the application
    assert closing.is_alive()  # closing is still waiting for the first request

    release.set()
    closing.join(30)
    request.join(30)
    assert left["value"] == 0 and gate.in_flight == 0
    assert answer["value"] == (200, b"first second")  # the request in flight was answered in full

    gate.open()
    assert fetch(server, "/again") == (200, b"first second")
    assert calls == ["/", "/again"]


def test_a_body_holds_the_gate_until_it_is_closed_except_a_file_from_disk(tmp_path):
    (tmp_path / "clip.webm").write_bytes(b"x" * 10)

    def application(environ, start_response):
        start_response("200 OK", [])
        if environ["PATH_INFO"] == "/file":
            return FileResponse(open(tmp_path / "clip.webm", "rb"))  # noqa: SIM115 (the response closes it)
        return iter([b"rows made while they are sent"])  # a streamed body may still be reading the database

    gate = ServerGate(application)
    body = gate({"PATH_INFO": "/export"}, lambda status, headers: None)
    assert gate.in_flight == 1
    assert b"".join(body) == b"rows made while they are sent" and gate.in_flight == 1
    body.close()
    body.close()
    assert gate.in_flight == 0  # once, however often the server closes it

    file_body = gate({"PATH_INFO": "/file"}, lambda status, headers: None)
    assert gate.in_flight == 0  # its view is done; a paused video download does not keep the test from ending
    file_body.file_to_stream.close()  # (closing the response itself would send Django's request_finished)


# --- the task ledger, fed by Celery's own signals --------------------------------------------------------------

QUEUE = "quiet-teardown-test"


@pytest.fixture
def celery_app():
    """A Celery app of its own (not made current) publishing through kombu's in-memory transport to QUEUE."""
    app = Celery("quiet-teardown-test", broker="memory://", set_as_current=False)
    app.conf.task_default_queue = QUEUE

    @app.task(name="quiet_teardown_test.add")
    def add(x, y):
        return x + y

    return app, add


@pytest.fixture
def ledger():
    ledger = TaskLedger({QUEUE})
    after_task_publish.connect(ledger.published, weak=False)
    task_postrun.connect(ledger.finished, weak=False)
    yield ledger
    after_task_publish.disconnect(ledger.published)
    task_postrun.disconnect(ledger.finished)


def test_the_ledger_waits_for_a_task_sent_until_it_has_run(celery_app, ledger):
    app, add = celery_app
    sent = add.apply_async((1, 2))
    assert ledger.wait(timeout=0.2) == [sent.id]  # counted from the real publish signal

    finishing = threading.Timer(0.2, lambda: add.apply((1, 2), task_id=sent.id))  # run, as a worker would
    finishing.start()
    assert ledger.wait(timeout=30) == []  # woken by the run's postrun signal
    finishing.join()


def test_a_run_reported_before_its_publish_leaves_nothing_owed(ledger):
    ledger.finished(task_id="t1")
    ledger.published(headers={"id": "t1", "eta": None}, routing_key=QUEUE)
    assert ledger.pending() == []


def test_a_task_for_later_or_for_another_queue_is_not_waited_for(celery_app, ledger):
    app, add = celery_app
    add.apply_async((1, 2), countdown=3600)  # a retry's countdown: a task for later
    add.apply_async((1, 2), queue="some-other-queue")  # no worker of this session consumes it
    assert ledger.wait(timeout=0.1) == []
