"""Every file download of the API answers its file to a client that asks for that file's type (``Accept``); the
REST framework's negotiation refused them with 406 before the view ran (annotation_site/api_negotiation.py).
JSON answers and errors stay JSON whatever Accept names."""

import pytest
from rest_framework.test import APIClient

from tests.security.world import World, without_rate_limits

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db, settings):
    without_rate_limits(settings)
    return World()


@pytest.fixture
def api(world):
    client = APIClient()
    client.force_authenticate(world.users["staff"])
    return client


def downloads(world):
    return [
        (f"/api/da/campaigns/{world.campaign.name}/judgments.csv", "text/csv"),
        (f"/api/tasks/t/{world.task.name}/labels/?format=csv", "text/csv"),
        (f"/api/factuality/projects/{world.project.name}/labels/", "application/x-ndjson"),
        (f"/api/datasets/{world.dataset.name}/export/?format=jsonl", "application/x-ndjson"),
    ]


def test_a_download_answers_its_file_to_a_client_asking_for_its_type(world, api):
    for url, media_type in downloads(world):
        response = api.get(url, HTTP_ACCEPT=media_type)
        assert response.status_code == 200, (url, response.status_code)
        assert response["Content-Type"].split(";")[0] == media_type.split(";")[0], url
        assert "attachment" in response["Content-Disposition"], url


def test_json_answers_and_errors_stay_json_whatever_accept_names(world, api):
    listing = api.get("/api/da/campaigns/", HTTP_ACCEPT="text/csv")
    assert listing.status_code == 200 and listing["Content-Type"] == "application/json"
    missing = api.get("/api/da/campaigns/no-such-campaign/judgments.csv", HTTP_ACCEPT="text/csv")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
