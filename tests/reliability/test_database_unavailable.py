"""While the database cannot be reached, requests answer 503 with Retry-After and a plain message (JSON for the
API, a page without database reads otherwise), so the pages' scripts retry the same submission; other errors stay
errors."""

import pytest
from django.db import OperationalError

from assessment import services


def unreachable(*args, **kwargs):
    raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')


def test_the_api_answers_503_with_retry_after(client, monkeypatch):
    monkeypatch.setattr(services, "assignment_from_token", unreachable)
    response = client.post("/api/da/assignments/anything/judgments/", {"item": 1}, content_type="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert (
        response.json()["error"] == "database_unavailable" and "Nothing you saved is lost" in response.json()["detail"]
    )


def test_a_page_answers_503_without_touching_the_database(db, client, monkeypatch, django_assert_num_queries):
    monkeypatch.setattr(services, "assignment_from_token", unreachable)
    with django_assert_num_queries(0):
        response = client.get("/da/a/anything/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "Try again in a moment" in response.content.decode()


def test_the_log_line_cannot_be_forged_through_the_path(client, monkeypatch, caplog):
    """The path is logged escaped, as Django's own request log writes it: a token holding a line break (%0A)
    does not start a log line of its own."""
    monkeypatch.setattr(services, "assignment_from_token", unreachable)
    with caplog.at_level("WARNING", logger="annotation_site.database_unavailable"):
        assert client.get("/da/a/x%0A2026-11-27 ERROR forged%0D/").status_code == 503
    [record] = [r for r in caplog.records if r.name == "annotation_site.database_unavailable"]
    assert "\n" not in record.getMessage() and "\r" not in record.getMessage()
    assert "x\\n2026-11-27 ERROR forged\\r" in record.getMessage()


def test_other_errors_are_not_hidden(client, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(services, "assignment_from_token", broken)
    with pytest.raises(ValueError):
        client.get("/da/a/anything/")


def statement_fault(*args, **kwargs):
    """A statement the database refuses whatever its state, as the driver reports it through Django: SQLite's
    SQLITE_ERROR (what "too many SQL variables" is too), PostgreSQL's class 54 (program limit exceeded)."""
    from django.db import connection, transaction

    sql = {
        "sqlite": "SELECT * FROM no_such_table_here",
        "postgresql": "SELECT lpad(" + ", ".join(["'x'"] * 101) + ")",  # 54023: more than 100 arguments
    }[connection.vendor]
    with transaction.atomic(), connection.cursor() as cursor:  # (a savepoint: the test's transaction goes on)
        cursor.execute(sql)


def test_a_statement_the_database_refuses_is_a_server_error_not_an_outage(db, client, monkeypatch, caplog):
    """It used to answer 503 "try again in a few seconds", which no retry mends, and the log said "database
    unavailable" without the traceback; it is now an error like any other (the test client re-raises it)."""
    monkeypatch.setattr(services, "assignment_from_token", statement_fault)
    with caplog.at_level("WARNING", logger="annotation_site.database_unavailable"):
        with pytest.raises(OperationalError):
            client.post("/api/da/assignments/anything/judgments/", {"item": 1}, content_type="application/json")
        with pytest.raises(OperationalError):
            client.get("/da/a/anything/")
    assert not [r for r in caplog.records if r.name == "annotation_site.database_unavailable"]


def _through_django(driver_error):
    """``driver_error`` as Django raises it (its DatabaseErrorWrapper: the driver's error as ``__cause__``)."""
    try:
        raise OperationalError(*driver_error.args) from driver_error
    except OperationalError as wrapped:
        return wrapped


def test_the_drivers_errors_of_an_outage_still_count_as_one(tmp_path):
    """Real driver errors of a database in a bad state: SQLite busy (another connection holds the write lock)
    and unable to open the file; PostgreSQL refusing the connection (no SQLSTATE) and a statement cancelled."""
    import sqlite3

    import psycopg2

    from annotation_site.database_unavailable import unavailable

    path = tmp_path / "locked.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    errors = []
    for attempt in (
        lambda: sqlite3.connect(path, timeout=0).execute("INSERT INTO t VALUES (1)"),
        lambda: sqlite3.connect(tmp_path / "no" / "such" / "dir.sqlite3").execute("SELECT 1"),
        lambda: psycopg2.connect(host="127.0.0.1", port=1, connect_timeout=2),
    ):
        with pytest.raises((sqlite3.OperationalError, psycopg2.OperationalError)) as raised:
            attempt()
        errors.append(raised.value)
    holder.close()
    assert [getattr(e, "sqlite_errorname", None) for e in errors] == ["SQLITE_BUSY", "SQLITE_CANTOPEN", None]
    assert all(unavailable(_through_django(e)) for e in errors)
    assert unavailable(OperationalError("raised by Django itself"))
