"""Prolific webhooks (hooks): ``submission.status.change`` and friends, posted to /crowd/webhooks/prolific/.

Every request is checked before it is believed: ``X-Prolific-Request-Signature`` must be
base64(HMAC-SHA256(secret, X-Prolific-Request-Timestamp + raw body)) with the workspace's hook secret
(``PROLIFIC_WEBHOOK_SECRET``), and the timestamp within ``PROLIFIC_WEBHOOK_TOLERANCE`` seconds of now (a replayed
old request is refused). Each event is stored once under its ``X-Event-ID`` (a redelivery answers 200 and
changes nothing)."""

import base64
import hashlib
import hmac
import time

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation_site import safe_json

from . import admission, config
from .models import Provider, Study, WebhookEvent


class WebhookRefused(Exception):
    status = 400


class BadSignature(WebhookRefused):
    status = 403


def signature(secret, timestamp, body):
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def verify(headers, body, now=None):
    secret = config.require("PROLIFIC_WEBHOOK_SECRET", "Prolific webhooks")
    sent = headers.get("X-Prolific-Request-Signature", "")
    timestamp = headers.get("X-Prolific-Request-Timestamp", "")
    if not sent or not timestamp:
        raise BadSignature("missing signature headers")
    try:
        age = abs((now or time.time()) - float(timestamp))
    except ValueError:
        raise BadSignature("the timestamp is not a number") from None
    if age > config.setting("PROLIFIC_WEBHOOK_TOLERANCE", 300):
        raise BadSignature("the request is too old (or from the future)")
    if not hmac.compare_digest(signature(secret, timestamp, body), sent):
        raise BadSignature("the signature does not match")


def receive(headers, body, now=None):
    """Verify, store once, apply. Returns (created, outcome)."""
    verify(headers, body, now)
    try:
        payload = safe_json.loads(body or b"{}")
    except ValueError:
        raise WebhookRefused("the body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookRefused("the body is not a JSON object")
    event_id = event_id_of(headers, payload)
    event_type = str(payload.get("event_type", ""))[:100]
    try:
        with transaction.atomic():
            event = WebhookEvent.objects.create(
                provider=Provider.PROLIFIC, event_id=event_id, event_type=event_type, payload=payload
            )
    except IntegrityError:
        return False, "duplicate event: nothing done"
    outcome = apply(event_type, payload)
    WebhookEvent.objects.filter(pk=event.pk).update(processed_at=timezone.now(), outcome=outcome[:300])
    return True, outcome


def event_id_of(headers, payload):
    """The event's id (``X-Event-ID``, else the body's ``event_id``): text that fits its column, never cut (two
    events whose ids began alike would be taken for one), else the request is refused."""
    event_id = headers.get("X-Event-ID") or payload.get("event_id") or ""
    if not isinstance(event_id, str):
        raise WebhookRefused("event_id: the event's id is not text")
    if not event_id:
        raise WebhookRefused("the event has no X-Event-ID")
    longest = WebhookEvent._meta.get_field("event_id").max_length
    if len(event_id) > longest:
        raise WebhookRefused(f"X-Event-ID: the event's id is longer than {longest} characters")
    return event_id


def apply(event_type, payload):
    if event_type != "submission.status.change":
        return f"ignored event type {event_type!r}"
    submission_id = str(payload.get("resource_id", ""))
    status = str(payload.get("status", ""))
    studies = Study.objects.filter(provider=Provider.PROLIFIC)
    if payload.get("study_id"):
        studies = studies.filter(external_id=payload["study_id"])
    study = studies.filter(participations__external_submission_id=submission_id).first()
    if study is None:
        return f"no participation for submission {submission_id}"
    return admission.apply_platform_status(study, submission_id, status)
