"""REST endpoints for researchers (staff only): campaigns, results, QC, assignments, replication."""

import pytest
from rest_framework.test import APIClient

from annotation_site.jobs.models import Job
from assessment import results, services, simulation
from assessment.models import Campaign

from .conftest import make_dataset, small_campaign


@pytest.fixture
def api(staff_user):
    client = APIClient()
    client.force_authenticate(staff_user)
    return client


def test_researcher_endpoints_are_staff_only(db, campaign, annotator, outsider, crowd_worker):
    for url in (
        "/api/da/campaigns/",
        f"/api/da/campaigns/{campaign.name}/",
        f"/api/da/campaigns/{campaign.name}/results/",
        f"/api/da/campaigns/{campaign.name}/qc/",
        "/api/da/replication/?a=x&b=y",
    ):
        assert crowd_worker.api.get(url).status_code in (401, 403), url  # no account
        for persona in (annotator, outsider):
            assert persona.api.get(url).status_code == 403, (persona.name, url)
    for persona in (annotator, outsider):
        assert persona.api.post("/api/da/campaigns/", {}, format="json").status_code == 403


def test_create_list_and_detail(api, db):
    make_dataset("api-ds", n_videos=15)
    response = api.post(
        "/api/da/campaigns/",
        {
            "name": "api-run",
            "dataset": "api-ds",
            "systems": ["Alpha", "Beta"],
            "human_system": "human",
            "hit_size": 20,
            "pairs_per_hit": 3,
            "repeats_per_hit": 2,
            "min_control_distance": 5,
            "seed": 5,
            "qc_min_pairs": 6,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "api-run" and body["seed"] == 5 and body["human_system"] == "human"
    assert sorted(body["systems"]) == ["Alpha", "Beta"]
    listed = api.get("/api/da/campaigns/").json()
    assert [c["name"] for c in listed["results"]] == ["api-run"]
    detail = api.get("/api/da/campaigns/api-run/").json()
    # 30 captions of Alpha and Beta in 12 system slots: the human captions are the hidden originals
    assert detail["progress"]["hits"] == 3 and detail["progress"]["judgments"] == 0
    # suggested: a worker needs 2 HITs for 6 pairs, so 4 workers per HIT (at least 3, a multiple of 2)
    assert detail["workers_per_hit"] == 4 and detail["watch_fraction"] == 0.9


@pytest.mark.parametrize(
    "data,message",
    [
        ({"dataset": "nope", "human_system": "human"}, "no dataset"),
        ({"dataset": "api-bad", "human_system": "Alpha"}, "human system"),
        ({"dataset": "api-bad", "human_system": "human", "systems": ["Zeta"]}, "no system Zeta"),
        ({"dataset": "api-bad", "human_system": "human", "hit_size": 8}, "system slots"),
    ],
)
def test_create_refusals(api, db, data, message):
    make_dataset("api-bad", n_videos=10)
    response = api.post(
        "/api/da/campaigns/",
        {"name": "x", "pairs_per_hit": 3, "repeats_per_hit": 2, "min_control_distance": 2, **data},
        format="json",
    )
    assert response.status_code == 400 and message in response.json()["detail"]
    assert not Campaign.objects.exists()


def test_results_captions_and_qc(api, db):
    campaign = small_campaign(make_dataset("api-res", n_videos=24), "api-res", qc_min_pairs=6)
    simulation.simulate_campaign(
        campaign, {"diligent": 8, "random": 2}, {"human": 80, "Alpha": 60, "Beta": 40, "Gamma": 20}, hits_per_worker=3
    )
    assert api.get("/api/da/campaigns/api-res/results/").json() == results.report(campaign)
    captions = api.get("/api/da/campaigns/api-res/captions/").json()
    assert set(captions[0]) == {"video_id", "system", "raw", "z", "n", "is_human"}
    assert len(captions) == len(results.caption_scores(campaign))
    assert api.get("/api/da/campaigns/api-res/qc/").json() == []  # nothing stored yet
    response = api.post("/api/da/campaigns/api-res/qc/")
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["job"])
    assert job.kind == "da-qc" and response.json()["status_url"] == f"/api/jobs/{job.pk}/"


def test_assignments_hand_out_hits_with_signed_links(api, campaign):
    response = api.post(f"/api/da/campaigns/{campaign.name}/assignments/", {"worker_id": "mturk-A1"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["hit"] == 1 and body["url"].startswith("http://testserver/da/a/")
    again = api.post(f"/api/da/campaigns/{campaign.name}/assignments/", {"worker_id": "mturk-A1"}, format="json")
    # the open assignment again (a signed token carries the second it was signed in, so compare what it names)
    named = services.assignment_from_token(again.json()["token"])
    assert named is not None and named == services.assignment_from_token(body["token"])
    state = APIClient().get(f"/api/da/assignments/{body['token']}/")
    assert state.status_code == 200 and state.json()["item"]["position"] == 1


def test_replication_endpoint(api, db):
    quality = {"human": 85, "Alpha": 65, "Beta": 45, "Gamma": 25}
    for name, seed in (("run-1", 1), ("run-2", 2)):
        campaign = small_campaign(make_dataset(f"{name}-ds", n_videos=24), name, qc_min_pairs=6)
        simulation.simulate_campaign(campaign, {"diligent": 8}, quality, seed=seed, hits_per_worker=3, prefix=name)
    body = api.get("/api/da/replication/?a=run-1&b=run-2").json()
    assert body["n_systems"] == 4 and body["z"]["r"] > 0.9 and body["raw"]["r"] > 0.9
    assert api.get("/api/da/replication/?a=run-1&b=nope").status_code == 404
