"""annotation_site.postgresql_backend: the connection health check sends nothing while the idle connection has
received nothing, and still replaces a connection the server has ended (a restart or ``pg_terminate_backend``)
before the request's first query. Against the real PostgreSQL on loopback (
the test database when the test run is on PostgreSQL, else the local server's ``postgres`` database), in both test
passes."""

import select
import time

import environ
import pytest
from django.db import OperationalError, connection
from django.db.backends.postgresql import base as django_postgresql
from django.db.utils import ConnectionHandler

from tests.conftest import require

LOCAL = "postgres://postgres@127.0.0.1:5432/postgres"


def _settings():
    if connection.vendor == "postgresql":  # the test database (DATABASE_URL names one the run may not have made)
        config = {key: connection.settings_dict[key] for key in ("NAME", "USER", "PASSWORD", "HOST", "PORT")}
    else:
        config = environ.Env.db_url_config(LOCAL)
    config.update(ENGINE="annotation_site.postgresql_backend", CONN_HEALTH_CHECKS=True, CONN_MAX_AGE=60)
    return config


@pytest.fixture
def wrappers(db, django_db_blocker):
    """Two connections of the platform's backend, of their own (not the test case's; ``db`` makes the test
    database)."""
    handler = ConnectionHandler({"default": _settings(), "other": _settings()})  # a handler needs a "default"
    with django_db_blocker.unblock():
        try:
            handler["default"].ensure_connection()
            handler["other"].ensure_connection()
        except OperationalError as exc:
            require(False, f"PostgreSQL on loopback ({exc})")
        yield handler["default"], handler["other"]
        handler.close_all()


@pytest.fixture
def round_trips(monkeypatch):
    """Calls of Django's own check (its ``SELECT 1``)."""
    calls = []
    original = django_postgresql.DatabaseWrapper.is_usable

    def counted(self):
        calls.append(self.alias)
        return original(self)

    monkeypatch.setattr(django_postgresql.DatabaseWrapper, "is_usable", counted)
    return calls


def _pid(wrapper):
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _wait_readable(wrapper, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if select.select([wrapper.connection], [], [], 0.05)[0]:
            return
    raise AssertionError("nothing arrived on the connection")


def _first_query_of_a_request(wrapper):
    """What a request's first query does: the health check once, then the query."""
    wrapper.health_check_done = False
    return _pid(wrapper)


def test_an_idle_connection_is_kept_without_a_round_trip(wrappers, round_trips):
    checked, _ = wrappers
    pid = _pid(checked)
    for _ in range(3):
        assert checked.is_usable()
        assert _first_query_of_a_request(checked) == pid  # the same connection
    assert round_trips == []


def test_a_connection_the_server_ended_is_replaced_before_the_first_query(wrappers, round_trips):
    checked, other = wrappers
    pid = _pid(checked)
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    _wait_readable(checked)  # the server's FATAL message and the end of the stream
    assert not checked.is_usable()
    assert round_trips == ["default"]  # the poll saw something: Django's SELECT 1 decided
    new_pid = _first_query_of_a_request(checked)  # no error: a fresh connection
    assert new_pid != pid


def test_something_else_arriving_lets_the_select_1_decide(wrappers, round_trips):
    """A notification arriving on an idle connection makes the socket readable without ending the session: the
    check falls back to Django's SELECT 1, which keeps the connection."""
    checked, other = wrappers
    pid = _pid(checked)
    with checked.cursor() as cursor:
        cursor.execute("LISTEN captioneval_health_check")
    with other.cursor() as cursor:
        cursor.execute("NOTIFY captioneval_health_check")
    _wait_readable(checked)
    assert checked.is_usable()
    assert round_trips == ["default"]
    assert _first_query_of_a_request(checked) == pid


def test_the_platform_uses_this_backend_on_postgresql():
    from django.conf import settings
    from django.db import connections

    connection = connections["default"]

    if connection.vendor == "postgresql":
        assert settings.DATABASES["default"]["ENGINE"] == "annotation_site.postgresql_backend"
        assert isinstance(connection, django_postgresql.DatabaseWrapper)
        assert type(connection).is_usable is not django_postgresql.DatabaseWrapper.is_usable
    else:
        assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
