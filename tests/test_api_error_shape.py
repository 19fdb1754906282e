"""One error shape for the APIs (issue #12, item 5): the factuality, DA and metrics APIs answer validation errors,
permission errors and conflicts with the same JSON body ({"error": code, "detail": sentence, ...}; validation adds
"fields"), keep the keys their clients read, and the OpenAPI schema documents it."""

import pytest
import yaml

from assessment import services, workers
from tests.assessment.conftest import make_dataset, small_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(staff_researcher):
    return staff_researcher.api


def assert_shape(response, status, error):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] == error
    assert isinstance(body["detail"], str) and body["detail"]
    return body


@pytest.mark.parametrize(
    "url,data,field",
    [
        ("/api/factuality/projects/", {"name": "p"}, "dataset"),
        ("/api/da/campaigns/", {"name": "c"}, "dataset"),
        ("/api/metrics/datasets/tiny/correlate/", {"metrics": "not a list"}, "metrics"),
    ],
)
def test_validation_errors_have_the_same_shape_in_the_three_apis(api, url, data, field):
    make_dataset("tiny", n_videos=4)
    body = assert_shape(api.post(url, data, format="json"), 400, "invalid")
    assert field in body["fields"] and all(isinstance(m, str) for m in body["fields"][field])
    assert field in body["detail"]
    assert body[field] == body["fields"][field]  # DRF's old top-level field keys are kept for existing clients


@pytest.mark.parametrize("url", ["/api/factuality/projects/", "/api/da/campaigns/", "/api/metrics/reports/"])
def test_permission_errors_have_the_same_shape_in_the_three_apis(outsider, crowd_worker, url):
    assert_shape(outsider.api.get(url), 403, "permission_denied")
    assert_shape(crowd_worker.api.get(url), 403, "not_authenticated")  # session/token auth: 403, DRF's choice


def test_conflicts_have_the_shape_and_keep_their_own_keys(api, db):
    campaign = small_campaign(make_dataset("full", n_videos=8), "full-da", workers_per_hit=1)
    for hit in campaign.hits.all():
        services.assign(campaign, workers.worker_by_external_id(f"w{hit.pk}"))
    assert_shape(
        api.post(f"/api/da/campaigns/{campaign.name}/assignments/", {"worker_id": "late"}, format="json"),
        409,
        "conflict",
    )
    # a refused campaign layout: a 400 of the campaign rules with its suggestions beside the shape
    body = assert_shape(
        api.post("/api/da/campaigns/", {"name": "x", "dataset": "nope", "human_system": "h"}, format="json"),
        400,
        "invalid",
    )
    assert body["detail"] == "no dataset named 'nope'"


def test_not_found_has_the_shape(api):
    assert_shape(api.get("/api/da/campaigns/none/"), 404, "not_found")
    assert_shape(api.get("/api/factuality/projects/none/"), 404, "not_found")


def test_the_schema_documents_the_error_shape(api):
    schema = yaml.safe_load(api.get("/api/schema/").content)
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"error", "detail", "fields"}
    for path, method in (
        ("/api/factuality/projects/", "post"),
        ("/api/da/campaigns/", "post"),
        ("/api/metrics/datasets/{name}/compute/", "post"),
    ):
        responses = schema["paths"][path][method]["responses"]
        for code in ("400", "403", "409"):
            assert responses[code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (
                path,
                code,
            )
