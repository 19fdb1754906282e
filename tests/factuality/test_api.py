"""REST endpoints: annotators reach only their own assignments (next video, draft, submit with idempotent
retries and refusals with reasons); researcher endpoints are staff-only."""

import json
import uuid

import pytest
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import annotator_for_user
from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.models import Project, Submission

from .conftest import answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotator_client(annotator, make_project):
    """The annotator persona invited to project "fact" (two videos): their page client, with their Annotator and
    the project."""
    client = annotator.client
    client.annotator = annotator_for_user(annotator.user)
    client.project = make_project(annotators=[client.annotator], videos=["v1", "v2"])
    return client


def post_json(client, url, data, method="post"):
    return getattr(client, method)(url, json.dumps(data), content_type="application/json")


def test_next_draft_submit_and_retry(annotator_client):
    client = annotator_client
    response = client.post(reverse("api-factuality-next", args=["fact"]))
    assert response.status_code == 200
    pk = response.json()["assignment"]
    assert response.json()["url"] == f"/factuality/assignments/{pk}/"
    found = client.project.assignments.get(pk=pk)
    presented = presented_captions(found)
    draft = post_json(
        client,
        reverse("api-factuality-draft", args=[pk]),
        {"answer": {"paragraphs": []}, "time_spent": 3.5, "video_played": True},
        method="put",
    )
    assert draft.status_code == 200 and "saved_at" in draft.json()
    body = {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer(presented, [5, 4, 3]),
        "time_spent": 61.2,
        "video_played": True,
    }
    first = post_json(client, reverse("api-factuality-submit", args=[pk]), body)
    assert first.status_code == 201 and first.json()["created"] is True
    again = post_json(client, reverse("api-factuality-submit", args=[pk]), body)
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["submission_uuid"] == body["submission_uuid"]
    assert Submission.objects.count() == 1 and Submission.objects.get().time_spent == 61.2


def test_submit_refusals_carry_their_reasons(annotator_client):
    client = annotator_client
    found = next_assignment(client.project, client.annotator)
    presented = presented_captions(found)
    url = reverse("api-factuality-submit", args=[found.pk])
    body = {"submission_uuid": str(uuid.uuid4()), "answer": answer(presented, [None, 4, 3], {(1, 0): []})}
    refused = post_json(client, url, body)
    assert refused.status_code == 409 and refused.json()["needs_confirmation"] is True
    assert [p["code"] for p in refused.json()["problems"]] == ["missing_score", "flagged_without_spans"]
    invalid = post_json(client, url, dict(body, answer=answer(presented, [9, 4, 3])))
    assert invalid.status_code == 400 and "from 1 to 5, not 9" in invalid.json()["problems"][0]["message"]
    confirmed = post_json(client, url, dict(body, confirm=True))
    assert confirmed.status_code == 201 and confirmed.json()["confirmed_incomplete"] is True


def test_others_assignments_are_invisible(annotator_client, other_annotator, crowd_worker):
    other = annotator_for_user(other_annotator.user)
    Project.objects.get(name="fact").members.create(annotator=other)
    theirs = next_assignment(annotator_client.project, other)
    for url, method in (
        (reverse("api-factuality-submit", args=[theirs.pk]), "post"),
        (reverse("api-factuality-draft", args=[theirs.pk]), "put"),
    ):
        assert post_json(annotator_client, url, {"answer": {}}, method=method).status_code == 404
    assert annotator_client.get(reverse("factuality-annotate", args=[theirs.pk])).status_code == 404
    assert Submission.objects.count() == 0
    # no account (a crowd worker reaches factuality work by signed links only): no next video
    assert crowd_worker.client.post(reverse("api-factuality-next", args=["fact"])).status_code == 403


def test_annotators_cannot_use_researcher_endpoints(annotator_client, outsider):
    for client in (annotator_client, outsider.client):
        for name in ("api-factuality-projects",):
            assert client.get(reverse(name)).status_code == 403
        for name in (
            "api-factuality-project",
            "api-factuality-agreement",
            "api-factuality-labels",
            "api-factuality-export",
        ):
            assert client.get(reverse(name, args=["fact"])).status_code == 403
        assert client.post(reverse("api-factuality-aggregate", args=["fact"])).status_code == 403


def test_staff_creates_a_project_and_invites_over_the_api(staff_client, small_dataset):
    response = post_json(
        staff_client,
        reverse("api-factuality-projects"),
        {
            "name": "api-made",
            "dataset": "small",
            "systems": ["Alpha", "Gamma"],
            "annotators_per_video": 2,
            "annotators": ["fresh-annotator"],
        },
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["annotators_per_video"] == 2 and body["shuffle_systems"] is True and body["kind"] == "factuality"
    assert "/factuality/invitations/" in body["invitations"]["fresh-annotator"]
    bad = post_json(
        staff_client, reverse("api-factuality-projects"), {"name": "x", "dataset": "small", "systems": ["Nope"]}
    )
    assert bad.status_code == 400 and "Nope" in json.dumps(bad.json())
    detail = staff_client.get(reverse("api-factuality-project", args=["api-made"])).json()
    assert detail["progress"]["videos"] == 3 and detail["annotators"][0]["annotator"] == "fresh-annotator"
    invited = post_json(staff_client, reverse("api-factuality-invite", args=["api-made"]), {"usernames": ["r2"]})
    assert invited.status_code == 200 and invited.json()["invited"]["r2"].startswith("http://testserver/")
    listed = staff_client.get(reverse("api-factuality-projects")).json()
    assert [p["name"] for p in listed] == ["api-made"]


def test_staff_aggregates_reads_agreement_and_downloads(staff_client, completed):
    agreement = staff_client.get(reverse("api-factuality-agreement", args=["anet-mini"]))
    assert agreement.status_code == 200
    body = agreement.json()
    assert body["paragraph"]["units"] == 9 and body["parameters"] == {
        "ties": "error",
        "word_units": "tokens",
        "min_units": 30,
    }
    assert staff_client.get(reverse("api-factuality-export", args=["anet-mini"])).status_code == 404
    aggregated = staff_client.post(reverse("api-factuality-aggregate", args=["anet-mini"]))
    assert aggregated.json()["captions"] == 9 and aggregated.json()["label_set"] == "anet-mini"
    export = staff_client.get(reverse("api-factuality-export", args=["anet-mini"]))
    assert export["Content-Disposition"] == 'attachment; filename="factuality_annotation.json"'
    assert json.loads(export.content)["v1"]["Alpha"]["paragraph_score"] == 4
    raw = staff_client.get(reverse("api-factuality-labels", args=["anet-mini"]))
    assert raw.content.decode().count("\n") == 27 and b'"annotator": "A1"' in raw.content


def test_staff_imports_raw_labels_over_the_api(staff_client, small_dataset):
    from django.core.files.uploadedfile import SimpleUploadedFile

    line = (
        json.dumps(
            {
                "video_id": "v3",
                "system": "Gamma",
                "annotator": "z",
                "paragraph_score": 5,
                "sentences": [{"error": 0, "spans": []}],
            }
        )
        + "\n"
    )
    response = staff_client.post(
        reverse("api-factuality-labels", args=["uploaded"]),
        {"file": SimpleUploadedFile("l.jsonl", line.encode()), "dataset": "small"},
    )
    assert response.status_code == 201 and response.json()["project"] == "uploaded"
    bad = staff_client.post(
        reverse("api-factuality-labels", args=["uploaded"]),
        {"file": SimpleUploadedFile("l.jsonl", b'{"video_id": "v3"}\n')},
    )
    assert bad.status_code == 400 and "l.jsonl, line 1, system: missing field" in bad.json()["problems"]


def test_the_schema_documents_the_endpoints(staff_client):
    schema = staff_client.get("/api/schema/")
    assert schema.status_code == 200
    for path in (
        b"/api/factuality/assignments/{id}/submit/",
        b"/api/factuality/projects/{name}/agreement/",
        b"/api/factuality/projects/{name}/aggregate/",
    ):
        assert path in schema.content


def test_staff_changes_a_project_over_the_api(staff_client, make_project):
    make_project()
    url = reverse("api-factuality-project", args=["fact"])
    response = staff_client.patch(
        url,
        json.dumps({"status": "closed", "annotators_per_video": 2, "instructions": "## Rules\nBe precise."}),
        content_type="application/json",
    )
    assert response.status_code == 200 and response.json()["status"] == "closed"
    project = Project.objects.get(name="fact")
    assert project.annotators_per_video == 2 and project.instructions.startswith("## Rules")
    assert project.closed_at is not None
    bad = staff_client.patch(url, json.dumps({"annotators_per_video": 0}), content_type="application/json")
    assert bad.status_code == 400


ADVERSARIAL_BODIES = {
    "deep nesting": b'{"answer": ' + b"[" * 50000 + b"]" * 50000 + b"}",
    "moderately deep nesting": b'{"answer": ' + b"[" * 40 + b"]" * 40 + b"}",
    "a number of 5000 digits": b'{"answer": {"paragraphs": []}, "time_spent": 1' + b"0" * 5000 + b"}",
    "a lone surrogate": b'{"answer": {"paragraphs": [], "note": "\\ud800"}, "time_spent": 1}',
    "a NUL character": b'{"answer": {"paragraphs": [], "note": "a\\u0000b"}, "time_spent": 1}',
    "NaN": b'{"answer": {"paragraphs": []}, "time_spent": NaN}',
    "not UTF-8": b'{"answer": {"paragraphs": [], "note": "\xff\xfe"}}',
}


@pytest.mark.parametrize("body", list(ADVERSARIAL_BODIES), ids=list(ADVERSARIAL_BODIES))
def test_adversarial_json_on_the_annotator_draft_is_a_clear_400(annotator_client, body):
    """A non-staff annotator's draft save with hostile JSON: 400 with a reason, nothing stored (issue #11)."""
    client = annotator_client
    found = next_assignment(client.project, client.annotator)
    url = reverse("api-factuality-draft", args=[found.pk])
    response = client.put(url, ADVERSARIAL_BODIES[body], content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["detail"].startswith("JSON parse error - ")
    found.refresh_from_db()
    assert not found.draft


def test_a_refused_next_video_makes_no_annotator_record(make_project, staff_researcher):
    """An account with no annotator record (a researcher who is no member) is refused the next video, and nothing
    is made for it on the way: an annotator record was (found by posting every route each kind of body,
    tests/security/test_header_values.py)."""
    make_project("fact")
    response = staff_researcher.api.post(reverse("api-factuality-next", args=["fact"]))
    assert response.status_code == 403 and response.json()["detail"] == "you are not invited to this project"
    assert not Annotator.objects.filter(user=staff_researcher.user).exists()
