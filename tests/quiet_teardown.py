"""Nothing of a finished test runs while the test database is emptied.

A test with ``transactional_db`` ends by emptying every table (``flush``: one TRUNCATE of all of them on
PostgreSQL). The live server (one for the whole session) and the in-process Celery worker may still be busy with
the test's work at that moment: a page the test closes sends its draft with ``keepalive``, an uploaded clip is
still being probed. A transaction that holds a lock TRUNCATE wants while waiting for one TRUNCATE already holds is
a deadlock, which PostgreSQL ends by failing one side; when that side is the flush, the test errs at teardown and
the next one finds the last one's rows (seen in CI on 4c03e90: "Database test_captioneval couldn't be flushed",
then "duplicate key value ... (name)=(fact-demo)").

- ``ServerGate`` wraps the live server's WSGI application: it counts the requests in flight and, once closed at the
  end of a test, waits for them and answers every later one 503 at once, without touching the database, until the
  next test opens it.
- ``TaskLedger`` follows, through Celery's signals, the tasks sent to the in-process worker's queues and the tasks
  it has run: at the end of a test it waits until the worker has run every task sent so far (a retry with a
  countdown is a task for later and is not waited for).

tests/conftest.py puts both around every test that uses ``live_server`` or ``celery_worker``, torn down before the
database is emptied; tests/test_quiet_teardown.py checks them.
"""

import threading
from collections import Counter

from django.http import FileResponse

REFUSED = b"This server is between two tests: the test that opened this page has ended.\n"


class ServerGate:
    """A WSGI application around another one that can be closed: it then waits for the requests in flight and
    answers each new one ``503`` without calling the application."""

    def __init__(self, application):
        self.application = application
        self._changed = threading.Condition()
        self._in_flight = 0
        self._open = True

    @classmethod
    def around(cls, server):
        """The gate around ``server``'s application (a ``wsgiref`` server such as the live server's ``httpd``),
        put there the first time."""
        application = server.get_app()
        if not isinstance(application, cls):
            application = cls(application)
            server.set_app(application)
        return application

    def __call__(self, environ, start_response):
        with self._changed:
            admitted = self._open
            if admitted:
                self._in_flight += 1
        if not admitted:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Retry-After", "1")])
            return [REFUSED]
        try:
            result = self.application(environ, start_response)
        except BaseException:
            self._leave()
            raise
        if isinstance(result, FileResponse):  # a file read from disk: its view is done, no database work is left
            self._leave()
            return result
        return _ThenCall(result, self._leave)

    def _leave(self):
        with self._changed:
            self._in_flight -= 1
            self._changed.notify_all()

    @property
    def in_flight(self):
        with self._changed:
            return self._in_flight

    def open(self):
        with self._changed:
            self._open = True

    def close(self, timeout):
        """Refuse new requests, wait up to ``timeout`` seconds for those in flight; return how many are left."""
        with self._changed:
            self._open = False
            self._changed.wait_for(lambda: self._in_flight == 0, timeout)
            return self._in_flight


class _ThenCall:
    """A WSGI response body that calls ``then`` once, after the body's own ``close`` (the server calls ``close``
    when it has sent the body, or failed to)."""

    def __init__(self, body, then):
        self._body = body
        self._then = then
        self._called = False

    def __iter__(self):
        return iter(self._body)

    def close(self):
        try:
            if hasattr(self._body, "close"):
                self._body.close()
        finally:
            if not self._called:
                self._called = True
                self._then()


class TaskLedger:
    """The tasks sent to ``queues`` that a worker has not run yet, kept from Celery's ``after_task_publish`` and
    ``task_postrun`` signals (connect ``published`` and ``finished`` to them).

    Counts are kept per task id and may go below zero: a quick worker can run a task before its sender's
    ``after_task_publish`` arrives. A message with an ``eta`` (a retry's countdown) is not counted; its run is."""

    def __init__(self, queues):
        self.queues = frozenset(queues)
        self._changed = threading.Condition()
        self._owed = Counter()

    def published(self, sender=None, headers=None, routing_key=None, **kwargs):
        headers = headers or {}
        if routing_key not in self.queues or headers.get("eta") or not headers.get("id"):
            return
        with self._changed:
            self._owed[headers["id"]] += 1

    def finished(self, sender=None, task_id=None, **kwargs):
        with self._changed:
            self._owed[task_id] -= 1
            self._changed.notify_all()

    def pending(self):
        with self._changed:
            return self._pending()

    def _pending(self):
        return sorted(task_id for task_id, owed in self._owed.items() if owed > 0)

    def wait(self, timeout):
        """Wait up to ``timeout`` seconds until every counted task has run; return the ids of those that have not."""
        with self._changed:
            self._changed.wait_for(lambda: not self._pending(), timeout)
            return self._pending()
