"""A submit that asks for it (``"next": true``, as the annotation page does when its next form is Start) hands
out the next video with the same service as Start and answers its page in ``next``: one request instead of
submit, Start and the page. A retry answers the same page, nothing left or a closed project hands nothing out,
and a failing hand-out never costs the stored answer (workflow.api.submit_response)."""

import json
import uuid

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.annotators.services import annotator_for_user
from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.models import Assignment, Project, Submission
from annotation_site.workflow import slots

from .conftest import answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def working(annotator, make_project):
    """``working(videos)``: the annotator persona's page client on project "fact" with those videos, their first
    video handed out; returns (client, project, assignment)."""

    def make(videos=("v1", "v2")):
        me = annotator_for_user(annotator.user)
        project = make_project(annotators=[me], videos=list(videos))
        return annotator.client, project, next_assignment(project, me)

    return make


def body_for(found, *, asks=True, uuid_=None):
    presented = presented_captions(found)
    body = {
        "submission_uuid": str(uuid_ or uuid.uuid4()),
        "answer": answer(presented, [4] * len(presented)),
        "time_spent": 30,
        "video_played": True,
    }
    if asks:
        body["next"] = True
    return json.dumps(body)


def submit(client, found, *, body=None, **options):
    return client.post(
        reverse("api-factuality-submit", args=[found.pk]),
        body or body_for(found, **options),
        content_type="application/json",
    )


def test_the_answer_names_the_next_videos_page_and_a_retry_names_it_again(working):
    client, project, first = working()
    key = uuid.uuid4()
    stored = submit(client, first, uuid_=key)
    assert stored.status_code == 201
    second = Assignment.objects.exclude(pk=first.pk).get(project=project)
    assert stored.json()["next"] == reverse("factuality-annotate", args=[second.pk])
    again = submit(client, first, uuid_=key)  # the answer was lost on the way: the page sends it again
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["next"] == stored.json()["next"]
    assert Assignment.objects.filter(project=project).count() == 2  # no second hand-out
    assert Submission.objects.count() == 1
    assert client.get(again.json()["next"]).status_code == 200  # the page it names opens


def test_without_asking_nothing_is_handed_out(working):
    client, project, first = working()
    stored = submit(client, first, asks=False)
    assert stored.status_code == 201 and "next" not in stored.json()
    assert Assignment.objects.filter(project=project).count() == 1  # taking a slot stays an explicit action


def test_nothing_left_answers_the_work_page_with_starts_message(working):
    client, project, only = working(videos=("v1",))
    stored = submit(client, only)
    assert stored.status_code == 201
    assert stored.json()["next"] == reverse("factuality-work", args=[project.name])
    assert "There is no video left for you in this project" in client.get(stored.json()["next"]).content.decode()


def test_a_closed_project_hands_nothing_out(working):
    client, project, first = working()
    Project.objects.filter(pk=project.pk).update(status=Project.Status.CLOSED)
    refused = submit(client, first)
    assert refused.status_code == 409 and "next" not in refused.json()
    assert Assignment.objects.filter(project=project).count() == 1


def test_a_failing_hand_out_keeps_the_answer_and_leaves_next_to_the_page(working, monkeypatch):
    client, project, first = working()

    def broken(**kwargs):
        raise RuntimeError("the hand-out broke")

    monkeypatch.setattr(slots, "hand_out", broken)
    stored = submit(client, first)
    assert stored.status_code == 201 and "next" not in stored.json()  # the page posts Start as before
    assert Submission.objects.filter(assignment=first).count() == 1
    assert Assignment.objects.filter(project=project).count() == 1


def test_the_crowd_links_submit_never_hands_out(working):
    from annotation_site.factuality.crowd_links import assignment_token

    client, project, first = working()
    body = {
        "submission_uuid": str(uuid.uuid4()),
        "answer": answer(presented_captions(first), [4] * len(presented_captions(first))),
        "video_played": True,
        "next": True,
    }
    stored = client.post(
        reverse("api-factuality-token-submit", args=[assignment_token(first)]),
        json.dumps(body),
        content_type="application/json",
    )
    assert stored.status_code == 201 and "next" not in stored.json()  # its page goes to the crowd's end page
    assert Assignment.objects.filter(project=project).count() == 1


def test_the_submit_with_its_hand_out_uses_a_constant_number_of_queries(annotator, make_project):
    me = annotator_for_user(annotator.user)
    warm = make_project(name="warm", annotators=[me], videos=["v1", "v2"])
    submit(annotator.client, next_assignment(warm, me))  # the compiled queries of this connection
    counts = []
    for name, videos in (("two", ["v1", "v2"]), ("three", ["v1", "v2", "v3"])):
        project = make_project(name=name, annotators=[me], videos=videos)
        first = next_assignment(project, me)
        body = body_for(first)
        with CaptureQueriesContext(connection) as queries:
            stored = submit(annotator.client, first, body=body)
        assert stored.status_code == 201 and "/assignments/" in stored.json()["next"]
        counts.append(len(queries))
    # 14 of the submit (session, user, annotator, assignment, captions, sentences, then the transaction storing
    # it, whose lookup recognises a retry: no lookup before it) and 7 of the hand-out (its savepoint, lock the membership, no open assignment,
    # the free video, take its slot, create the assignment, release): savepoints included, as tests run inside
    # a transaction. Start and the page's own lookups (8 statements before the page) are no longer requested.
    assert counts == [21, 21]


def test_the_schema_documents_next_on_both_protocols_submits(staff_client):
    schema = yaml.safe_load(staff_client.get("/api/schema/").content)
    parts = schema["components"]["schemas"]
    for path in ("/api/factuality/assignments/{id}/submit/", "/api/tasks/assignments/{id}/submit/"):
        operation = schema["paths"][path]["post"]
        request = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert parts[request]["properties"]["next"]["type"] == "boolean"
        for code in ("200", "201"):
            answer_ = operation["responses"][code]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
            assert parts[answer_]["properties"]["next"]["type"] == "string"
            assert "next" not in parts[answer_]["required"]
