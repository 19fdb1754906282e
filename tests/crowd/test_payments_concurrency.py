"""The money path under concurrency, on the real database (PostgreSQL in CI's second mode; an SQLite file as in
production otherwise): two workers running the payment task for the same study at the same moment, while
Prolific answers slowly, send each approval, each rejection and each bonus exactly once (asserted on the fake
server's log); a run that crashes between "bonus batch created" and "paid" is resumed by the next run, which
pays that batch once and never creates or pays another."""

import time
from decimal import Decimal

import pytest

from annotation_site.crowd import ledger, payments, sending
from annotation_site.crowd.models import BonusScope, Dispatch, LedgerEntry, Policy, Study

from ..factuality.conftest import in_thread, race, thread_database
from .conftest import FAILED, PASSED, prolific_study, worked


class Crash(BaseException):
    """The process dying between two calls (a BaseException: nothing in the engine may catch it)."""


def _setup(toy, fake):
    target = toy.add("race", [(str(i), 1) for i in range(1, 9)])
    study = prolific_study(
        fake, target, name="race", bonus_scope=BonusScope.PER_PASSING_HIT, bonus_amount=Decimal("0.50")
    )
    for i, qc in enumerate([PASSED, PASSED, PASSED, PASSED, FAILED, FAILED]):
        worked(toy, target, study, fake, f"5f00000000000000000000{i:02d}", qc=qc)
    decisions = payments.preview(
        toy,
        target,
        policy=Policy.APPROVE_PASSING,
        bonus_scope=study.bonus_scope,
        bonus_amount=study.bonus_amount,
        rejection_message=study.rejection_message,
    )
    payments.record(target, decisions, policy=Policy.APPROVE_PASSING)
    return study


def _in_threads(use, functions, offsets=None):
    """Run the functions in threads started together; ``offsets``: seconds each waits after the start (a run
    arriving while the other's platform calls are in flight). Returns the errors raised."""

    def run(ready, function, offset):
        ready()
        time.sleep(offset)
        function()

    offsets = list(offsets or [0] * len(functions))
    return race(run, list(zip(functions, offsets, strict=True)), use=use)[1]


def _sent_once(fake):
    """Every approval, rejection and bonus reached Prolific exactly once."""
    approved = [i for call in fake.log("POST", "bulk-approve") for i in call.body["submission_ids"]]
    assert sorted(approved) == sorted(set(approved)) and len(approved) == 4, approved
    rejections = [c.path for c in fake.log("POST", r"/submissions/[0-9a-f]+/transition/$")]
    assert len(rejections) == len(set(rejections)) == 2, rejections
    assert len(fake.log("POST", "/pay/")) == 1
    assert sorted(c for cents in fake.paid().values() for c in cents) == [50] * 4
    assert fake.shape_errors == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("second_after", [0.0, 0.3, 0.9, 1.6])  # together, and during the first's calls
def test_two_payment_runs_at_once_send_everything_exactly_once(toy, fake_prolific, second_after):
    study = _setup(toy, fake_prolific)
    # Prolific queues the requests: both runs are inside the engine while the other's calls are in flight
    fake_prolific.fail("POST", "bulk-approve", kind="queued", delay=0.6, times=5)
    fake_prolific.fail("POST", r"/transition/$", kind="queued", delay=0.3, times=5)
    fake_prolific.fail("POST", "bonus-payments", kind="queued", delay=0.6, times=5)
    fake_prolific.fail("POST", "/pay/", kind="queued", delay=0.6, times=5)
    with thread_database() as use:
        errors = _in_threads(use, [lambda: sending.apply_study(Study.objects.get(pk=study.pk))] * 2, [0, second_after])
        assert not errors, errors
        # whatever one run left to the other, a third run settles it, still without sending anything twice
        _in_threads(use, [lambda: sending.apply_study(Study.objects.get(pk=study.pk))])
        states = in_thread(
            use, lambda: sorted(LedgerEntry.objects.filter(study_id=study.pk).values_list("state", flat=True))
        )
        dispatches = in_thread(
            use,
            lambda: sorted(Dispatch.objects.filter(study_id=study.pk, kind="bonus").values_list("state", flat=True)),
        )
    _sent_once(fake_prolific)
    assert states == ["confirmed"] * 10
    assert dispatches == ["done"]


@pytest.mark.django_db(transaction=True)
def test_a_crash_after_the_bonus_batch_is_created_is_resumed_without_paying_twice(toy, fake_prolific, monkeypatch):
    study = _setup(toy, fake_prolific)

    def crash(point):
        if point == "after-bonus-created-recorded":
            raise Crash(point)

    monkeypatch.setattr(ledger, "checkpoint", crash)
    with thread_database() as use:
        [error] = _in_threads(use, [lambda: sending.apply_study(Study.objects.get(pk=study.pk))])
        assert isinstance(error, Crash)
        assert len(fake_prolific.bulk_bonuses) == 1 and fake_prolific.log("POST", "/pay/") == []
        monkeypatch.setattr(ledger, "checkpoint", lambda point: None)
        # two workers pick the retried task up at once: the created batch is paid once, no second batch is made
        errors = _in_threads(use, [lambda: sending.apply_study(Study.objects.get(pk=study.pk))] * 2, [0, 0.2])
        assert not errors, errors
        _in_threads(use, [lambda: sending.apply_study(Study.objects.get(pk=study.pk))])
        states = in_thread(
            use, lambda: sorted(LedgerEntry.objects.filter(study_id=study.pk).values_list("state", flat=True))
        )
    _sent_once(fake_prolific)
    assert len(fake_prolific.bulk_bonuses) == 1
    assert states == ["confirmed"] * 10


@pytest.mark.django_db(transaction=True)
def test_webhooks_delivered_twice_at_once_release_the_hit_once(toy, fake_prolific, settings):
    """The same event delivered twice at the same moment, and a second event for the same change, release the
    submission's HIT once and give its place back once (webhooks never send money; they only free places)."""
    import json
    import time as clock

    from django.test import Client
    from django.urls import reverse

    from annotation_site.crowd import admission
    from annotation_site.crowd.models import Participation, WebhookEvent

    from .fake_prolific import new_event_id, webhook_signature

    settings.PROLIFIC_WEBHOOK_SECRET = "hook-secret"
    target = toy.add("hooks", [("1", 1), ("2", 1)])
    study = prolific_study(fake_prolific, target, name="hooks")
    pid = "5f" + "b" * 22
    session = fake_prolific.add_submission(study.external_id, pid)
    participation = admission.admit(study, {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session})
    admission.take_slot(participation)
    body = json.dumps(
        {
            "event_type": "submission.status.change",
            "resource_id": session,
            "status": "RETURNED",
            "study_id": study.external_id,
        }
    )
    same, other = new_event_id(), new_event_id()
    answers = []

    def deliver(event_id):
        def send():
            timestamp = str(int(clock.time()))
            answers.append(
                Client()
                .post(
                    reverse("crowd-webhook-prolific"),
                    data=body,
                    content_type="application/json",
                    HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature("hook-secret", timestamp, body),
                    HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
                    HTTP_X_EVENT_ID=event_id,
                )
                .status_code
            )

        return send

    with thread_database() as use:
        errors = _in_threads(use, [deliver(same), deliver(same), deliver(other)])
        assert not errors, errors
        state = in_thread(
            use,
            lambda: (
                list(Participation.objects.filter(study_id=study.pk).values_list("status", flat=True)),
                Study.objects.get(pk=study.pk).places_taken,
                sorted(WebhookEvent.objects.values_list("event_id", flat=True)),
            ),
        )
    assert answers == [200, 200, 200]
    statuses, places_taken, events = state
    assert statuses == ["released"] and places_taken == 0
    assert events == sorted([same, other])
    assert len(toy.targets["hooks"].released) == 1
