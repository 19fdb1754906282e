"""A simulated Prolific study of a Direct Assessment campaign, end to end against the fake Prolific server:
40 participants arrive (verified by their Prolific session), some return, some time out, some rate carelessly
and fail QC; payments follow the approve-passing policy with a bonus per passing HIT; rejected HITs go back to
the pool with a new place on Prolific, until every HIT is done by the planned number of passing workers. The
payment task runs twice, and once is killed mid-batch and run again: every payment reaches Prolific exactly
once (the server's log)."""

import uuid
from decimal import Decimal

import numpy as np
import pytest

from annotation_site.crowd import adapters, admission, ledger, payments
from annotation_site.crowd.models import LedgerEntry, Participation
from annotation_site.crowd.tasks import apply_payments
from assessment import services
from assessment.models import Assignment, Item, QCResult

from ..assessment.conftest import make_dataset, small_campaign
from .conftest import study_of
from .fake_prolific import new_event_id, webhook_signature

pytestmark = pytest.mark.django_db
N_PARTICIPANTS = 40
SECRET = "study-hook-secret"


class Crash(BaseException):
    pass


def rate(assignment, kind, rng, *, stop_after=None):
    """Rate the assignment's items as a participant of ``kind`` would, through the real submission path."""
    items = list(Item.objects.filter(hit=assignment.hit).order_by("position").values_list("pk", "item_type"))
    for n, (item, item_type) in enumerate(items):
        if stop_after is not None and n >= stop_after:
            return False
        good = {"degraded": 15, "original": 85}.get(item_type, 70)
        score = good + rng.integers(-8, 9) if kind == "diligent" else 100 - good  # careless: backwards
        services.submit(
            assignment,
            item_id=item,
            score=int(np.clip(score, 0, 100)),
            client_uuid=uuid.uuid4(),
            elapsed_ms=4000,
            played=True,
            watched_seconds=5,
        )
    return True


def hook(client, session, status):
    import json
    import time

    body = json.dumps({"event_type": "submission.status.change", "resource_id": session, "status": status})
    stamp = str(int(time.time()))
    return client.post(
        "/crowd/webhooks/prolific/",
        data=body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature(SECRET, stamp, body),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=stamp,
        HTTP_X_EVENT_ID=new_event_id(),
    )


def test_a_prolific_study_end_to_end(client, fake_prolific, settings, monkeypatch):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    settings.PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete"
    rng = np.random.default_rng(42)
    dataset = make_dataset("crowd-e2e", n_videos=24)
    campaign = small_campaign(
        dataset,
        "crowd-e2e",
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=2,
    )
    n_hits = campaign.hits.count()
    places = n_hits * campaign.workers_per_hit
    external = fake_prolific.add_study(total_available_places=places)
    study = study_of(
        "da",
        campaign,
        "crowd-e2e-prolific",
        provider="prolific",
        external_id=external,
        completion_code="CE2E0001",
        places=places,
        reward=Decimal("2.00"),
        bonus_scope="per-passing-hit",
        bonus_amount=Decimal("0.50"),
    )
    kinds = {}
    for i in range(N_PARTICIPANTS):  # 1 in 8 returns, 1 in 8 times out, 1 in 8 is careless
        kinds[i] = ["returns", "times_out", "careless", "diligent", "diligent", "diligent", "diligent", "diligent"][
            i % 8
        ]

    arrivals = iter(range(N_PARTICIPANTS))
    pending_timeouts = []
    crashed_once = False
    for _round in range(12):
        # participants arrive while there are places
        for i in arrivals:
            pid = f"5f{i:022d}"
            session = fake_prolific.add_submission(external, pid)
            participation = admission.admit(study, {"PROLIFIC_PID": pid, "STUDY_ID": external, "SESSION_ID": session})
            try:
                participation, work = admission.take_slot(participation)
            except admission.AdmissionRefused:
                fake_prolific.set_status(session, "RETURNED")  # the study is full: they go back to Prolific
                continue
            assignment = Assignment.objects.select_related("hit__campaign").get(pk=int(work.key))
            kind = kinds[i]
            if kind == "returns":
                rate(assignment, "diligent", rng, stop_after=4)
                fake_prolific.set_status(session, "RETURNED")
                assert hook(client, session, "RETURNED").json()["outcome"] == "released"
            elif kind == "times_out":
                rate(assignment, "diligent", rng, stop_after=2)
                fake_prolific.set_status(session, "TIMED-OUT")
                pending_timeouts.append(session)
            else:
                assert rate(assignment, kind, rng)
                ending = admission.finish(participation)
                assert ending.url == "https://app.prolific.com/submissions/complete?cc=CE2E0001"
                fake_prolific.set_status(session, "AWAITING REVIEW")
            study.refresh_from_db()
            if study.places_taken >= study.places:
                break
        admission.sync_submissions(study)  # time-outs are found by the sync
        # payments: record the policy's decisions, then the Celery task sends them (twice: nothing more happens)
        adapter, target = adapters.resolve("da", campaign.name)
        decisions = payments.preview(
            adapter, target, policy="approve-passing", bonus_scope=study.bonus_scope, bonus_amount=study.bonus_amount
        )
        payments.record(target, decisions, policy="approve-passing")
        if not crashed_once and LedgerEntry.objects.filter(kind="bonus", state="planned").count() >= 2:
            crashed_once = True

            def crash(point):
                if point == "after-bonus-pay":
                    raise Crash(point)

            monkeypatch.setattr(ledger, "checkpoint", crash)
            with pytest.raises(Crash):
                apply_payments.apply(
                    args=[study.pk], throw=True
                )  # killed after Prolific paid, before the run recorded it
            monkeypatch.setattr(ledger, "checkpoint", lambda point: None)
        # the task runs here, in this process (the crash above must happen in the test's hands; the same task
        # on a real worker is tested in test_commands_api.py)
        apply_payments.apply(args=[study.pk], throw=True)
        apply_payments.apply(args=[study.pk], throw=True)
        study.refresh_from_db()
        live = Assignment.objects.filter(hit__campaign=campaign, released_at__isnull=True, completed_at__isnull=False)
        if live.count() == places and not LedgerEntry.objects.exclude(state="confirmed").exists():
            break
    assert crashed_once

    # every HIT is done by the planned number of workers, all of whom passed QC and were approved
    live = list(Assignment.objects.filter(hit__campaign=campaign, released_at__isnull=True).select_related("worker"))
    assert all(a.completed_at is not None for a in live)
    per_hit = {}
    for a in live:
        per_hit[a.hit_id] = per_hit.get(a.hit_id, 0) + 1
    assert sorted(per_hit.values()) == [campaign.workers_per_hit] * n_hits
    statuses = dict(QCResult.objects.filter(campaign=campaign).values_list("worker__external_id", "status"))
    assert {statuses[a.worker.external_id] for a in live} == {"passed"}
    approved = set(
        LedgerEntry.objects.filter(action="approve", state="confirmed").values_list("assignment_key", flat=True)
    )
    assert approved == {str(a.pk) for a in live}

    # rejections: exactly the careless participants who finished, each replaced by a new place
    careless = {
        p.external_submission_id
        for p in Participation.objects.filter(study=study)
        if kinds[int(p.participant.platform_id[2:])] == "careless" and p.completed_at is not None
    }
    rejected = set(
        LedgerEntry.objects.filter(action="reject", state="confirmed").values_list("submission_id", flat=True)
    )
    assert rejected == careless and len(rejected) >= 3
    assert all(fake_prolific.submissions[s]["status"] == "REJECTED" for s in rejected)
    assert all(len(fake_prolific.submissions[s]["bonus_payments"]) == 0 for s in rejected)

    # returned and timed-out work was released and never decided or paid
    gone = Participation.objects.filter(study=study, status="released").exclude(external_submission_id__in=rejected)
    assert gone.count() >= 8
    assert not LedgerEntry.objects.filter(submission_id__in=[p.external_submission_id for p in gone]).exists()

    # money: one approval and one 0.50 bonus per accepted HIT, each sent to Prolific exactly once
    approved_submissions = set(LedgerEntry.objects.filter(action="approve").values_list("submission_id", flat=True))
    assert fake_prolific.paid() == {s: [50] for s in approved_submissions}
    assert len(fake_prolific.payments) == places
    bulk_approved = [s for c in fake_prolific.log("POST", "bulk-approve") for s in c.body["submission_ids"]]
    assert sorted(bulk_approved) == sorted(approved_submissions)
    assert fake_prolific.shape_errors == []
