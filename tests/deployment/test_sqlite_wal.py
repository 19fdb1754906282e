"""The embedded SQLite database runs in WAL mode, switched on once per file rather than on every connection."""

import sqlite3
import threading

import pytest
from django.conf import settings
from django.db.backends.sqlite3.base import DatabaseWrapper


@pytest.fixture
def sqlite_options():
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        # The settings under test are those of the embedded default; build them as settings.py does.
        return {"transaction_mode": "IMMEDIATE", "timeout": 20}
    return dict(settings.DATABASES["default"]["OPTIONS"])


def _settings_for(path, options):
    """A connection's settings for a database file of the test's own."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": options,
        "TIME_ZONE": None,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False,
    }


def test_connections_do_not_each_ask_for_the_journal_mode_change(sqlite_options):
    """Converting a file to WAL needs an exclusive lock: asked by every new connection, racing connections can
    wait on each other until "database is locked" (seen in CI in a five-thread test)."""
    assert "journal_mode" not in sqlite_options.get("init_command", "").lower()


def test_a_new_database_file_is_switched_to_wal_and_stays_there(tmp_path, sqlite_options, django_db_blocker):
    path = tmp_path / "fresh.sqlite3"
    sqlite3.connect(path).close()  # created in the default (rollback journal) mode
    base = _settings_for(path, sqlite_options)
    errors = []
    barrier = threading.Barrier(6)

    def connect_and_write(n):
        wrapper = DatabaseWrapper(dict(base), alias=f"wal-{n}")
        try:
            barrier.wait(timeout=10)
            with wrapper.cursor() as cursor:
                cursor.execute("CREATE TABLE IF NOT EXISTS t (x integer)")
                cursor.execute("INSERT INTO t VALUES (%s)", [n])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            wrapper.close()

    threads = [threading.Thread(target=connect_and_write, args=(n,)) for n in range(6)]
    with django_db_blocker.unblock():  # these connections go to a file of their own, not the test database
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert check.execute("SELECT count(*) FROM t").fetchone()[0] == 6
    check.close()


def test_a_switch_refused_at_once_as_locked_is_tried_again(tmp_path, sqlite_options, django_db_blocker, monkeypatch):
    """SQLite answers "database is locked" at once, without its busy timeout, when connections opened together
    on a file still in rollback mode race for the conversion (about one run in 150 of the test above): the
    switch is tried again until the timeout has passed."""
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    path = tmp_path / "raced.sqlite3"
    sqlite3.connect(path).close()
    refusals = []
    real = SQLiteCursorWrapper.execute

    def refuse_twice(self, query, params=None):
        if query.replace(" ", "").upper() == "PRAGMAJOURNAL_MODE=WAL" and len(refusals) < 2:
            refusals.append(query)
            raise sqlite3.OperationalError("database is locked")
        return real(self, query, params)

    monkeypatch.setattr(SQLiteCursorWrapper, "execute", refuse_twice)
    settings_dict = _settings_for(path, sqlite_options)
    wrapper = DatabaseWrapper(settings_dict, alias="raced")
    with django_db_blocker.unblock():
        try:
            with wrapper.cursor() as cursor:
                cursor.execute("CREATE TABLE t (x integer)")
        finally:
            wrapper.close()
    assert len(refusals) == 2
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
