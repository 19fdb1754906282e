"""The REST endpoints under /api/metrics/ (staff only): metrics and scores, import, compute, correlate, reports."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation_site.jobs.models import Job
from metrics_eval import services
from metrics_eval.models import CaptionPair, Report
from tests.conftest import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(staff_user):
    client = APIClient()
    client.force_authenticate(staff_user)
    return client


def test_metrics_and_scores(api, tiny_scores):
    metrics = api.get("/api/metrics/datasets/tiny/metrics/").json()
    assert [(m["name"], m["source"], m["n_scores"]) for m in metrics] == [
        ("good", "imported", 12),
        ("noise", "imported", 12),
    ]
    page = api.get("/api/metrics/datasets/tiny/scores/?metric=noise&limit=5").json()
    assert page["count"] == 12 and len(page["results"]) == 5
    assert set(page["results"][0]) == {"metric", "video_id", "system", "score"}
    assert {r["metric"] for r in page["results"]} == {"noise"}
    assert api.get("/api/metrics/datasets/nope/metrics/").status_code == 404


def test_import_scores_and_pairs(api, tiny_dataset):
    upload = SimpleUploadedFile("m.csv", b"video_id,system,metric,score\nvid-a,Alpha,m,1\nvid-b,Beta,m,2\n")
    response = api.post("/api/metrics/datasets/tiny/import/", {"file": upload, "version": "0.3"}, format="multipart")
    assert response.status_code == 201 and response.json() == {"dataset": "tiny", "metrics": {"m": 2}}
    bad = SimpleUploadedFile("m.csv", b"video_id,system,metric,score\nvid-a,Alpha,m,1\n")
    response = api.post("/api/metrics/datasets/tiny/import/", {"file": bad}, format="multipart")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "m.csv, metric: metric 'm' already has scores: import under another name, or replace it "
        "(--replace / replace=true)"
    ]
    pairs = SimpleUploadedFile("p.csv", b"video_id,correct,foil\nvid-a,Alpha,Gamma\n")
    response = api.post("/api/metrics/datasets/tiny/pairs/", {"file": pairs, "pair_set": "foil"}, format="multipart")
    assert response.status_code == 201 and CaptionPair.objects.count() == 1


def test_correlate_answers_the_contract_and_reuses_reports(api, tiny_scores):
    body = {"metrics": ["good"], "method": "spearman", "resamples": 100}
    response = api.post("/api/metrics/datasets/tiny/correlate/", body, format="json")
    assert response.status_code == 201
    data = response.json()
    assert (data["method"], data["level"], list(data["metrics"])) == ("spearman", "segment", ["good"])
    assert set(data["metrics"]["good"]["paragraph"]) == {"r", "ci", "n"}
    again = api.post("/api/metrics/datasets/tiny/correlate/", body, format="json")
    assert again.status_code == 200 and again.json()["report"] == data["report"]
    bad = api.post("/api/metrics/datasets/tiny/correlate/", {"method": "cosine"}, format="json")
    assert bad.status_code == 400
    missing = api.post("/api/metrics/datasets/tiny/correlate/", {"human": "pairs", "pair_set": "x"}, format="json")
    assert missing.status_code == 400 and "no pair set 'x'" in missing.json()["detail"]

    # a metric named twice is one column and the same report (was a 500: the repeated column made a frame)
    twice = api.post("/api/metrics/datasets/tiny/correlate/", dict(body, metrics=["good", "good"]), format="json")
    assert twice.status_code == 200 and twice.json()["report"] == data["report"]

    listing = api.get("/api/metrics/reports/?dataset=tiny").json()
    assert listing["count"] == 1 and "result" not in listing["results"][0]
    detail = api.get(f"/api/metrics/reports/{data['report']}/").json()
    assert detail["snapshot"]["counts"]["captions"] == 12 and detail["versions"]["numpy"]
    assert detail["result"]["metrics"]["good"]["paragraph"]["r"] == data["metrics"]["good"]["paragraph"]["r"]


@pytest.mark.django_db(transaction=True)  # the job is sent when the request's transaction commits
def test_compute_starts_a_job(api, tiny_dataset, eager_tasks, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    response = api.post("/api/metrics/datasets/tiny/compute/", {"metrics": ["meteor"]}, format="json")
    assert response.status_code == 202
    job = wait_until(
        lambda: Job.objects.filter(pk=response.json()["job"], status__in=["succeeded", "failed"]).first(),
        timeout=60,
        what="the job to finish",
    )  # run off the request, even when eager
    assert job.status == Job.Status.FAILED and "needs Java" in job.error
    assert api.post("/api/metrics/datasets/tiny/compute/", {"metrics": ["bleu9"]}, format="json").status_code == 400
    refused = api.post(
        "/api/metrics/datasets/tiny/compute/", {"metrics": ["bleu4"], "reference_sets": ["x"]}, format="json"
    )
    assert refused.status_code == 400 and "unknown reference set" in refused.json()["detail"]


def test_endpoints_are_staff_only(annotator, outsider, tiny_scores):
    for client in (annotator.api, outsider.api):
        assert client.get("/api/metrics/datasets/tiny/metrics/").status_code == 403
        assert client.post("/api/metrics/datasets/tiny/correlate/", {}, format="json").status_code == 403
        assert client.get("/api/metrics/reports/").status_code == 403
    assert not Report.objects.exists()


def test_schema_documents_the_endpoints(api):
    schema = api.get("/api/schema/?format=json").content.decode()
    for path in (
        "/api/metrics/datasets/{name}/correlate/",
        "/api/metrics/datasets/{name}/compute/",
        "/api/metrics/reports/{id}/",
    ):
        assert path in schema


def test_correlate_names_the_field_of_every_refusal(api, tiny_scores):
    """An unknown label set or campaign, and a dataset without metric scores, were answered 400 with a bare
    ``detail``; every parameter refusal names its field under ``fields``, as the others do."""
    url = "/api/metrics/datasets/tiny/correlate/"
    for body, field, words in (
        ({"labels": "nope"}, "labels", "dataset tiny has no label set 'nope'"),
        ({"human": "da", "campaign": "nosuch"}, "campaign", "no DA campaign named 'nosuch'"),
    ):
        response = api.post(url, dict(body, resamples=100), format="json")
        assert response.status_code == 400
        answer = response.json()
        assert answer["error"] == "invalid" and list(answer["fields"]) == [field]
        assert answer["fields"][field][0].startswith(words) and answer["detail"].startswith(f"{field}: {words}")
    assert not Report.objects.exists()


def test_correlate_without_metric_scores_names_the_metrics_field(api, tiny_dataset):
    response = api.post("/api/metrics/datasets/tiny/correlate/", {"resamples": 100}, format="json")
    assert response.status_code == 400 and list(response.json()["fields"]) == ["metrics"]
    assert "this dataset has no metric scores yet" in response.json()["fields"]["metrics"][0]


def test_correlate_refuses_what_does_not_apply_naming_the_field(api, tiny_scores):
    """A grouping at system level was dropped, and a method for pairs answered with ranking accuracy: both are
    400 naming the field now, and nothing is stored."""
    url = "/api/metrics/datasets/tiny/correlate/"
    response = api.post(url, {"level": "system", "group_by": "video", "resamples": 100}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid" and list(body["fields"]) == ["group_by"]
    assert "grouping by video applies to the segment level only" in body["fields"]["group_by"][0]
    assert body["detail"].startswith("group_by: grouping by video applies to the segment level only")

    services.import_pairs(tiny_scores, "video_id,correct,foil\nvid-a,Alpha,Gamma\n", "p.csv", pair_set="foil")
    pairs = {"human": "pairs", "pair_set": "foil", "resamples": 100}
    response = api.post(url, dict(pairs, method="spearman"), format="json")
    assert response.status_code == 400 and list(response.json()["fields"]) == ["method"]
    assert "measured by pairwise ranking accuracy" in response.json()["fields"]["method"][0]
    assert not Report.objects.exists()
    assert api.post(url, pairs, format="json").json()["method"] == "ranking_accuracy"
    # no method: Pearson for factuality, as before
    assert api.post(url, {"resamples": 100}, format="json").json()["method"] == "pearson"
