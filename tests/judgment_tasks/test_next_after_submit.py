"""A submit that asks for it (``"next": true``, as the annotation page does: its next form is Start, or a
crowd participant's Next) hands out the next item with the same service as that form and answers its page in
``next``. A retry answers the same page; a participant whose link quota is reached goes to their end page (and
on to the platform's completion address); a failing hand-out never costs the stored answer."""

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.annotators.services import annotator_for_user
from annotation_site.judgment_tasks import participants, services
from annotation_site.judgment_tasks.assignment import next_assignment
from annotation_site.judgment_tasks.models import Assignment, Submission, Task
from annotation_site.workflow import slots

pytestmark = pytest.mark.django_db

FINISH = "https://app.prolific.com/submissions/complete?cc=C0DE"


def items(n):
    return [{"item_id": f"i{k}", "video_id": f"c{k + 1}", "questions": ["a?", "b?"]} for k in range(n)]


@pytest.fixture
def task_of(make_task):
    def make(n, name="verify"):
        return make_task(name, "fifa-verification", items(n))

    return make


def body(*, asks=True, key=None):
    data = {"submission_uuid": str(key or uuid.uuid4()), "answer": {"answer": ["yes", "no"]}, "video_played": True}
    if asks:
        data["next"] = True
    return json.dumps(data)


def post(client, found, data, token=None):
    headers = {"X-Participant-Token": token} if token else {}
    return client.post(
        reverse("api-tasks-submit", args=[found.pk]), data, content_type="application/json", headers=headers
    )


def test_an_annotators_answer_names_the_next_items_page_and_a_retry_names_it_again(task_of, annotator):
    task = task_of(3)
    me = annotator_for_user(annotator.user)
    services.add_member(task, me)
    first = next_assignment(task, me)
    sent = body()
    stored = post(annotator.client, first, sent)
    assert stored.status_code == 201
    second = Assignment.objects.get(task=task, status="open")
    assert stored.json()["next"] == reverse("tasks-annotate", args=[second.pk])
    again = post(annotator.client, first, sent)
    assert again.status_code == 200 and again.json()["next"] == stored.json()["next"]
    assert Assignment.objects.filter(task=task).count() == 2 and Submission.objects.count() == 1
    assert annotator.client.get(stored.json()["next"]).status_code == 200


def test_nothing_left_answers_the_work_page_with_starts_message(task_of, annotator):
    task = task_of(1)
    me = annotator_for_user(annotator.user)
    services.add_member(task, me)
    stored = post(annotator.client, next_assignment(task, me), body())
    assert stored.json()["next"] == reverse("tasks-work", args=[task.name])
    assert "There is no item left for you in this task" in annotator.client.get(stored.json()["next"]).content.decode()


def test_a_participant_goes_on_until_the_quota_then_to_the_completion_address(task_of, client):
    task = task_of(5)
    person = participants.admit(task, provider="prolific", external_id="5f1e")
    token = participants.token_for(task, person, limit=2, finish_url=FINISH)
    first = participants.next_unit(task, person, limit=2)
    stored = post(client, first, body(), token)
    second = Assignment.objects.get(task=task, annotator=person, status="open")
    assert stored.json()["next"] == reverse("tasks-participant-item", args=[token, second.pk])
    last = post(client, second, body(), token)  # the link's quota (2) is reached
    assert last.status_code == 201 and last.json()["next"] == reverse("tasks-participant-done", args=[token])
    assert Assignment.objects.filter(task=task, annotator=person).count() == 2
    assert client.get(last.json()["next"])["Location"] == FINISH


def test_a_closed_task_hands_nothing_out(task_of, client):
    task = task_of(3)
    person = participants.admit(task, provider="link", external_id="p1")
    token = participants.token_for(task, person)
    first = participants.next_unit(task, person)
    Task.objects.filter(pk=task.pk).update(status=Task.Status.CLOSED)
    refused = post(client, first, body(), token)
    assert refused.status_code == 409 and "next" not in refused.json()
    assert Assignment.objects.filter(task=task).count() == 1


def test_without_asking_or_when_the_hand_out_fails_the_answer_has_no_next(task_of, client, monkeypatch):
    task = task_of(3)
    person = participants.admit(task, provider="link", external_id="p1")
    token = participants.token_for(task, person)
    first = participants.next_unit(task, person)
    plain = post(client, first, body(asks=False), token)
    assert plain.status_code == 201 and "next" not in plain.json()
    assert Assignment.objects.filter(task=task).count() == 1

    def broken(**kwargs):
        raise RuntimeError("the hand-out broke")

    monkeypatch.setattr(slots, "hand_out", broken)
    resubmitted = post(client, first, body(), token)  # a new answer to the same item, stored despite the failure
    assert resubmitted.status_code == 201 and "next" not in resubmitted.json()
    assert Submission.objects.filter(assignment=first).count() == 2
    assert Assignment.objects.filter(task=task).count() == 1


def test_the_submit_with_its_hand_out_uses_a_constant_number_of_queries(task_of, client):
    counts = []
    for name, n in (("warm", 2), ("small", 3), ("large", 40)):
        task = task_of(n, name=name)
        person = participants.admit(task, provider="link", external_id=f"p-{name}")
        token = participants.token_for(task, person, limit=10)
        first = participants.next_unit(task, person, limit=10)
        sent = body()
        with CaptureQueriesContext(connection) as queries:
            stored = post(client, first, sent, token)
        assert "/items/" in stored.json()["next"]
        counts.append(len(queries))
    # 9 of the submit (the token's task and participant, the assignment, then the transaction storing it, whose
    # lookup recognises a retry: no lookup before it) and 8 of the hand-out (its savepoint, lock the membership, no open assignment, how many they
    # have (the quota), the free item, take its slot, create the assignment, release): savepoints included, as
    # tests run inside a transaction. The participant's Next and the page's own token reads are no longer asked.
    assert counts[1:] == [17, 17], counts
