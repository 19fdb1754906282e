"""Prolific webhooks: signature and timestamp verified, events stored once by X-Event-ID, a returned submission
releases its HIT."""

import json
import time

import pytest
from django.urls import reverse

from annotation_site.crowd import admission
from annotation_site.crowd.models import Participation, WebhookEvent

from .fake_prolific import new_event_id, webhook_signature
from .test_admission import prolific

pytestmark = pytest.mark.django_db
SECRET = "hook-secret-for-tests"


@pytest.fixture
def hooked(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    settings.PROLIFIC_WEBHOOK_TOLERANCE = 300


def post(client, payload, *, event_id=None, secret=SECRET, timestamp=None, body=None, event_header=True):
    """A signed hook request; ``event_header=False`` leaves out X-Event-ID (the body's event_id is then read)."""
    body = body if body is not None else json.dumps(payload)
    timestamp = timestamp or str(int(time.time()))
    headers = {"HTTP_X_EVENT_ID": event_id or new_event_id()} if event_header else {}
    return client.post(
        reverse("crowd-webhook-prolific"),
        data=body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature(secret, timestamp, body),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        **headers,
    )


def working(toy, fake_prolific):
    target = toy.add("t", [("1", 1)])
    study = prolific(fake_prolific, target)
    pid = "5f" + "a" * 22
    session = fake_prolific.add_submission(study.external_id, pid)
    participation = admission.admit(study, {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session})
    admission.take_slot(participation)
    return study, session


def test_a_returned_submission_releases_its_hit_once(client, toy, fake_prolific, hooked):
    study, session = working(toy, fake_prolific)
    payload = {
        "event_type": "submission.status.change",
        "resource_id": session,
        "status": "RETURNED",
        "study_id": study.external_id,
    }
    event = new_event_id()
    first = post(client, payload, event_id=event)
    assert first.status_code == 200 and first.json() == {"created": True, "outcome": "released"}
    assert Participation.objects.get().status == "released"
    again = post(client, payload, event_id=event)  # Prolific redelivers
    assert again.status_code == 200 and again.json()["created"] is False
    assert WebhookEvent.objects.count() == 1
    study.refresh_from_db()
    assert study.places_taken == 0


def test_bad_signatures_old_requests_and_missing_ids_are_refused(client, toy, fake_prolific, hooked):
    study, session = working(toy, fake_prolific)
    payload = {"event_type": "submission.status.change", "resource_id": session, "status": "RETURNED"}
    assert post(client, payload, secret="wrong").status_code == 403
    assert post(client, payload, timestamp=str(int(time.time()) - 3600)).status_code == 403
    body = json.dumps(payload)
    timestamp = str(int(time.time()))
    tampered = client.post(
        reverse("crowd-webhook-prolific"),
        data=body.replace("RETURNED", "APPROVED"),
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature(SECRET, timestamp, body),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        HTTP_X_EVENT_ID="e1",
    )
    assert tampered.status_code == 403
    no_id = post(client, payload, event_header=False)
    assert no_id.status_code == 400
    assert Participation.objects.get().status == "working" and WebhookEvent.objects.count() == 0


def test_without_a_secret_the_endpoint_names_the_variable(client, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    response = client.post(reverse("crowd-webhook-prolific"), data="{}", content_type="application/json")
    assert response.status_code == 503 and "PROLIFIC_WEBHOOK_SECRET" in response.json()["error"]


@pytest.mark.parametrize("event_id", [5, 1.5, True, {"id": "e"}, ["e"]])
def test_an_event_id_that_is_not_text_is_refused_clearly(client, hooked, event_id):
    """A signed body whose event_id is a number, an object or a list (and no X-Event-ID) was a 500 for a number or
    an object, and a list was stored as its text."""
    response = post(client, {"event_type": "submission.status.change", "event_id": event_id}, event_header=False)
    assert response.status_code == 400
    assert response.json() == {"error": "event_id: the event's id is not text"}
    assert not WebhookEvent.objects.exists()


def test_an_event_id_longer_than_its_column_is_refused_not_cut(client, hooked):
    """Cut to 200 characters, two events whose ids began alike were one: the second was answered "duplicate"."""
    response = post(client, {"event_type": "x"}, event_id="e" * 201)
    assert response.status_code == 400
    assert response.json() == {"error": "X-Event-ID: the event's id is longer than 200 characters"}
    assert post(client, {"event_type": "x"}, event_id="e" * 200).json()["created"] is True
    assert WebhookEvent.objects.get().event_id == "e" * 200
