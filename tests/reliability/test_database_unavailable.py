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
