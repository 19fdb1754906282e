"""The replication endpoint and page for campaigns without judgments (issue #11: a 500 with a traceback): a
clear 400 / message naming the campaign, no NumPy or pandas internals."""

import pytest

from tests.assessment.conftest import make_dataset, small_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_empty_campaigns():
    dataset = make_dataset("repl", n_videos=12)
    return small_campaign(dataset, "repl-a"), small_campaign(dataset, "repl-b")


def test_api_answers_400_naming_the_campaign(staff_client, two_empty_campaigns):
    response = staff_client.get("/api/da/replication/?a=repl-a&b=repl-b")
    assert response.status_code == 400, response.content[:300]
    detail = response.json()["detail"]
    assert "repl-a" in detail and "no judgments" in detail
    for internal in ("numpy", "ndarray", "dtype", "Traceback", "KeyError", "pandas"):
        assert internal not in detail


def test_page_says_what_is_missing(staff_client, two_empty_campaigns):
    response = staff_client.get("/da/replication/?a=repl-a&b=repl-b")
    assert response.status_code == 200
    assert b"no judgments" in response.content and b"repl-a" in response.content


def test_missing_parameters_are_a_400(staff_client):
    response = staff_client.get("/api/da/replication/")
    assert response.status_code in (400, 404)
