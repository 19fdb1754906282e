"""The payment engine against the fake Prolific server: decisions from QC, the ledger, and exactly-once sending
across retries, failures and crashes (asserted on the server's own log)."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation_site.crowd import ledger, payments, sending
from annotation_site.crowd.models import BonusScope, Dispatch, LedgerEntry, Participation, Policy
from annotation_site.crowd.providers.prolific import ProlificProvider

from .conftest import FAILED, PASSED, SHORT, prolific_study, worked

pytestmark = pytest.mark.django_db


class Crash(BaseException):
    """Stands for the process dying between two calls (not an Exception: nothing may catch it)."""


def crash_at(monkeypatch, name, times=1):
    state = {"left": times}

    def checkpoint(point):
        if point == name and state["left"] > 0:
            state["left"] -= 1
            raise Crash(point)

    monkeypatch.setattr(ledger, "checkpoint", checkpoint)


@pytest.fixture
def study_setup(toy, fake_prolific):
    target = toy.add("camp", [(str(i), 1) for i in range(1, 9)])
    study = prolific_study(fake_prolific, target, bonus_scope=BonusScope.PER_PASSING_HIT, bonus_amount=Decimal("0.50"))
    people = {}
    for i, qc in enumerate([PASSED, PASSED, PASSED, FAILED, FAILED, SHORT]):
        people[f"p{i}"] = worked(toy, target, study, fake_prolific, f"5f00000000000000000000{i:02d}", qc=qc)
    people["still"] = worked(
        toy, target, study, fake_prolific, "5f0000000000000000000099", qc=PASSED, complete=False, status="ACTIVE"
    )
    return toy, target, study


def plan_and_record(toy, target, study, policy=Policy.APPROVE_PASSING):
    decisions = payments.preview(
        toy,
        target,
        policy=policy,
        bonus_scope=study.bonus_scope,
        bonus_amount=study.bonus_amount,
        rejection_message=study.rejection_message,
    )
    payments.record(target, decisions, policy=policy)
    return decisions


def in_doubt_dispatch(study_setup, fake_prolific):
    """The study's bonus batch left in doubt: its pay call answered 502 (nothing paid) and a rerun cannot tell."""
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "/pay/", status=502)
    sending.apply_study(study)
    sending.apply_study(study)
    return Dispatch.objects.get(kind="bonus", state=Dispatch.State.IN_DOUBT)


def without_api_token(monkeypatch):
    """The Prolific client cannot be made: no API token configured."""
    from annotation_site.crowd.config import MissingCredential

    def no_token(self):
        raise MissingCredential("PROLIFIC_API_TOKEN is not set")

    monkeypatch.setattr(ProlificProvider, "make_client", no_token)


def test_preview_follows_the_policy_and_records_nothing(study_setup):
    toy, target, study = study_setup
    decisions = payments.preview(
        toy, target, policy=Policy.APPROVE_PASSING, bonus_scope=BonusScope.PER_PASSING_HIT, bonus_amount=Decimal("0.50")
    )
    actions = sorted((d.qc.status, d.completed, d.action, d.bonus) for d in decisions)
    assert actions == sorted(
        [("passed", True, "approve", Decimal("0.50"))] * 3
        + [("failed", True, "reject", None)] * 2
        + [("insufficient_data", True, "review", None), ("passed", False, "review", None)]
    )
    rejected = [d for d in decisions if d.action == "reject"]
    assert all(len(d.reason) >= 100 for d in rejected)
    assert LedgerEntry.objects.count() == 0
    assert {d.as_dict()["qc"]["status"] for d in decisions} == {"passed", "failed", "insufficient_data"}


def test_applying_sends_every_decision_and_bonus_once(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    assert LedgerEntry.objects.filter(state="planned").count() == 3 + 2 + 3  # approvals, rejections, bonuses
    result = sending.apply_study(study)
    assert result["states"] == {"planned": 0, "sent": 0, "confirmed": 8, "failed": 0}
    assert len(fake_prolific.log("POST", "bulk-approve")) == 1
    assert len(fake_prolific.log("POST", r"/transition/$")) == 2
    assert fake_prolific.shape_errors == []
    statuses = sorted(s["status"] for s in fake_prolific.submissions.values())
    assert statuses.count("APPROVED") == 3 and statuses.count("REJECTED") == 2
    assert sorted(c for cents in fake_prolific.paid().values() for c in cents) == [50, 50, 50]
    # the two rejected HITs go back to the pool (their places are free again) for someone else
    rejected = LedgerEntry.objects.filter(action="reject")
    assert {e.participation.status for e in rejected} == {"released"}
    assert sorted(toy.targets["camp"].released) == sorted(e.assignment_key for e in rejected)
    study.refresh_from_db()
    assert study.places == 8  # no place is added: the released ones are free again
    # a second run, and a second recording of the same decisions, send nothing more
    plan_and_record(toy, target, study)
    sending.apply_study(study)
    assert len(fake_prolific.payments) == 3
    assert len(fake_prolific.log("POST", "bulk-approve")) == 1
    assert len(fake_prolific.log("POST", "/pay/")) == 1
    assert Participation.objects.filter(status="released").count() == 2  # released once, not on every run
    document = payments.preview(toy, target, policy=Policy.APPROVE_PASSING)
    assert sorted(d.action for d in document if d.state == "confirmed") == ["approve"] * 3 + ["reject"] * 2


@pytest.mark.parametrize("status", ["RETURNED", "ACTIVE", "TIMED-OUT"])
def test_an_approval_prolific_skips_is_not_confirmed_and_earns_no_bonus(study_setup, fake_prolific, status):
    """Prolific's bulk-approve answers "in progress" and approves only submissions awaiting review. An approval
    was recorded as confirmed from that answer, and its bonus paid, for work Prolific never approved (a
    participant who returned the study after the decisions were recorded)."""
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    approved = list(LedgerEntry.objects.filter(action="approve").order_by("pk"))
    skipped = approved[0].submission_id
    fake_prolific.submissions[skipped]["status"] = status
    for _ in range(2):  # and a later run does not change its mind
        sending.apply_study(study)
    row = LedgerEntry.objects.get(pk=approved[0].pk)
    assert row.state == "failed" and f"the submission is {status}, not APPROVED" in row.error
    assert LedgerEntry.objects.get(kind="bonus", assignment_key=row.assignment_key).state == "planned"
    assert skipped not in fake_prolific.paid()
    others = [e.submission_id for e in approved[1:]]
    assert sorted(fake_prolific.paid()) == sorted(others)  # the other two approvals and bonuses went through
    assert LedgerEntry.objects.filter(kind="bonus", state="confirmed").count() == 2


def test_an_approval_prolific_has_not_applied_yet_waits_for_the_next_run(study_setup, fake_prolific, monkeypatch):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    real = ProlificProvider.make_client

    accepted = []

    class Lagging(real):  # bulk-approve accepted ("in progress"), applied only after this run
        def bulk_approve(self, submission_ids):
            accepted.extend(submission_ids)
            return {"detail": "Bulk approve in progress"}

    monkeypatch.setattr(ProlificProvider, "make_client", Lagging)
    sending.apply_study(study)
    approvals = LedgerEntry.objects.filter(action="approve")
    assert set(approvals.values_list("state", flat=True)) == {"sent"}  # not confirmed from the answer alone
    assert "not applied yet" in approvals.first().error
    assert fake_prolific.payments == []  # no bonus before its approval shows
    for submission_id in accepted:  # Prolific applies them meanwhile
        fake_prolific.submissions[submission_id]["status"] = "APPROVED"
    sending.apply_study(study)  # the next run settles them from the submissions, then pays the bonuses
    assert len(accepted) == 3  # accepted once, in the first run: never sent again
    assert set(approvals.values_list("state", flat=True)) == {"confirmed"}
    assert len(fake_prolific.payments) == 3


def test_failed_rows_are_sent_again_only_when_a_person_plans_them_again(study_setup, fake_prolific, client, staff_user):
    """Nothing moved a row out of ``failed``: a rejection refused for its short message, or approvals refused
    for a wrong API token, stayed failed once the cause was fixed (and Prolific approves on its own what is never
    rejected)."""
    toy, target, study = study_setup
    study.rejection_message = "Too short."  # (saved past the study's own check, as an older study may hold it)
    study.save(update_fields=["rejection_message"])
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "bulk-approve", status=401, times=1)
    sending.apply_study(study)
    sending.apply_study(study)
    failed = LedgerEntry.objects.filter(state="failed")
    assert sorted(failed.values_list("action", flat=True)) == ["approve"] * 3 + ["reject"] * 2
    assert "100 characters" in failed.filter(action="reject").first().error
    assert fake_prolific.payments == [] and len(fake_prolific.log("POST", r"/transition/$")) == 0
    study.rejection_message = ""  # fixed: the platform's explanation
    study.save(update_fields=["rejection_message"])
    client.force_login(staff_user)
    page = client.get(reverse("crowd-study", args=[study.name])).content.decode()
    assert "Plan failed rows again (5)" in page
    client.post(reverse("crowd-study-action", args=[study.name]), {"action": "retry-failed"})
    assert LedgerEntry.objects.filter(state="failed").count() == 0
    plan_and_record(toy, target, study)  # brings the planned rejections up to date
    sending.apply_study(study)
    assert set(LedgerEntry.objects.values_list("state", flat=True)) == {"confirmed"}
    assert all(len(c.body["message"]) >= 100 for c in fake_prolific.log("POST", r"/transition/$"))
    assert len(fake_prolific.payments) == 3
    assert sending.plan_failed_again(study) == {"planned": 0, "confirmed": 0, "unchecked": 0}


def test_a_prolific_study_with_a_rejection_prolific_refuses_is_not_made(toy, fake_prolific):
    from annotation_site.crowd import studies

    target = toy.add("camp2", [("1", 1)])
    with pytest.raises(studies.StudyError, match="rejection_message: Prolific needs at least 100 characters"):
        studies.create_study("toy", target.name, name="short", provider="prolific", rejection_message="Too short.")
    with pytest.raises(studies.StudyError, match="rejection_category: Prolific's categories are"):
        studies.create_study("toy", target.name, name="odd", provider="prolific", rejection_category="LAZY")
    studies.create_study("toy", target.name, name="fine", provider="prolific", rejection_message="")


def test_rate_limits_and_server_errors_are_retried(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "bulk-approve", status=429, retry_after="0", times=2)
    fake_prolific.fail("POST", r"/transition/$", status=503, times=1)
    fake_prolific.fail("POST", "/pay/", status=429, retry_after="0", times=1)
    sending.apply_study(study)
    assert LedgerEntry.objects.exclude(state="confirmed").count() == 0
    assert [c.status for c in fake_prolific.log("POST", "bulk-approve")] == [429, 429, 200]
    assert [c.status for c in fake_prolific.log("POST", "/pay/")] == [429, 202]
    assert len(fake_prolific.payments) == 3


def test_a_pay_call_that_fails_with_5xx_is_never_repeated_blindly(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "/pay/", kind="drop")  # processed (paid), but the answer never arrives
    sending.apply_study(study)
    assert len(fake_prolific.log("POST", "/pay/")) == 1
    dispatch = Dispatch.objects.get(kind="bonus")
    assert dispatch.state == Dispatch.State.PAYING
    assert LedgerEntry.objects.filter(kind="bonus", state="sent").count() == 3
    sending.apply_study(study)  # the rerun looks at the submissions' bonus payments instead of paying again
    assert len(fake_prolific.log("POST", "/pay/")) == 1
    assert len(fake_prolific.payments) == 3
    dispatch.refresh_from_db()
    assert dispatch.state == Dispatch.State.DONE
    assert LedgerEntry.objects.filter(kind="bonus", state="confirmed").count() == 3


def test_a_5xx_on_pay_that_did_not_pay_leaves_the_dispatch_in_doubt(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "/pay/", status=502)  # not processed; the client cannot know that
    sending.apply_study(study)
    sending.apply_study(study)
    assert len(fake_prolific.log("POST", "/pay/")) == 1 and fake_prolific.payments == []
    dispatch = Dispatch.objects.get(kind="bonus")
    assert dispatch.state == Dispatch.State.IN_DOUBT
    result = sending.summary(study)
    assert result["in_doubt"] == [dispatch.pk]
    # a person checks Prolific (nothing paid) and says so: the rows go back and a new batch pays them once
    sending.resolve_dispatch(dispatch, paid=False)
    sending.apply_study(study)
    assert len(fake_prolific.payments) == 3
    assert LedgerEntry.objects.filter(kind="bonus", state="confirmed").count() == 3


def test_not_paid_is_refused_while_prolific_shows_the_batch_paid(study_setup, fake_prolific):
    """Prolific pays a batch in the minutes after the pay call: a person who looked too early and said "not
    paid" had its rows planned again and paid a second time."""
    study = study_setup[2]
    dispatch = in_doubt_dispatch(study_setup, fake_prolific)
    first = dispatch.entries.order_by("pk").first()
    fake_prolific.submissions[first.submission_id]["bonus_payments"].append(50)  # it shows up later
    with pytest.raises(ValueError, match="now shows bonuses of dispatch .* paid"):
        sending.resolve_dispatch(dispatch, paid=False)
    dispatch.refresh_from_db()
    assert dispatch.state == Dispatch.State.IN_DOUBT
    assert set(dispatch.entries.values_list("state", flat=True)) == {"sent"}
    sending.apply_study(study)
    assert len(fake_prolific.log("POST", "/pay/")) == 1  # nothing paid again
    fake_prolific.fail("GET", "/submissions/", status=503, times=10)
    with pytest.raises(ValueError, match="could not be asked again"):
        sending.resolve_dispatch(dispatch, paid=False)
    sending.resolve_dispatch(dispatch, paid=True)
    assert set(dispatch.entries.values_list("state", flat=True)) == {"confirmed"}


@pytest.mark.parametrize(
    "point",
    ["after-approve-batch", "after-reject", "after-bonus-create", "after-bonus-created-recorded", "after-bonus-pay"],
)
def test_a_crash_between_two_calls_then_a_rerun_sends_each_payment_exactly_once(
    study_setup, fake_prolific, monkeypatch, point
):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    crash_at(monkeypatch, point)
    with pytest.raises(Crash):
        sending.apply_study(study)
    monkeypatch.setattr(ledger, "checkpoint", lambda name: None)
    sending.apply_study(study)
    sending.apply_study(study)
    assert sorted(fake_prolific.paid().items()) == sorted(
        (e.submission_id, [50]) for e in LedgerEntry.objects.filter(kind="bonus")
    )
    assert len(fake_prolific.log("POST", "/pay/")) == 1
    assert LedgerEntry.objects.exclude(state="confirmed").count() == 0
    transitions = fake_prolific.log("POST", r"/submissions/[0-9a-f]+/transition/$")
    rejected = {c.path for c in transitions}
    assert len(rejected) == 2  # each rejection reached Prolific; a repeat (idempotent there) is allowed
    assert fake_prolific.shape_errors == []


def test_a_definite_refusal_fails_the_row_with_the_reason(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    rejected = LedgerEntry.objects.filter(action="reject").first()
    fake_prolific.set_status(rejected.submission_id, "RETURNED")
    sending.apply_study(study)
    rejected.refresh_from_db()
    assert rejected.state == "failed" and "RETURNED" in rejected.error


def test_a_decision_once_sent_is_frozen_when_qc_changes(study_setup, fake_prolific):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    sending.apply_study(study)
    qc = toy.targets["camp"].qc
    for worker in [w for w, outcome in qc.items() if outcome == PASSED]:
        qc[worker] = FAILED  # the passers now fail: their approvals are already confirmed
    decisions = plan_and_record(toy, target, study)
    approved = [d for d in decisions if d.action == "approve"]
    assert len(approved) == 3 and {d.state for d in approved} == {"confirmed"}
    sending.apply_study(study)
    assert len(fake_prolific.log("POST", r"/transition/$")) == 2


def test_short_rejection_messages_are_refused_before_sending(study_setup, fake_prolific):
    toy, target, study = study_setup
    study.rejection_message = "Too short."
    study.save()
    plan_and_record(toy, target, study)
    provider = ProlificProvider(study)
    sending.apply_study(study, provider)
    failed = LedgerEntry.objects.filter(action="reject")
    assert {e.state for e in failed} == {"failed"}
    assert all("at least 100 characters" in e.error for e in failed)
    assert fake_prolific.log("POST", r"/transition/$") == []


def test_timeouts_are_retried_for_safe_calls_and_reconciled_for_the_rest(study_setup, fake_prolific, settings):
    toy, target, study = study_setup
    settings.PROLIFIC_TIMEOUT = 0.3
    plan_and_record(toy, target, study)
    # the approval answers too late five times running (more than the retries): the rows stay sent...
    fake_prolific.fail("POST", "bulk-approve", kind="slow", delay=0.6, times=6)
    sending.apply_study(study)
    approvals = LedgerEntry.objects.filter(action="approve")
    assert {e.state for e in approvals} == {"sent"} and all("no answer within" in e.error for e in approvals)
    assert LedgerEntry.objects.filter(kind="bonus", state="planned").count() == 3  # no bonus before approval
    # ...and the next run finds them approved on Prolific (the slow calls did go through): nothing is re-sent
    calls = len(fake_prolific.log("POST", "bulk-approve"))
    # the usual timeout again: with 0.3 s, any call of this run (a bonus, not retried) slowed by a loaded machine
    # would be left "sent" as well
    settings.PROLIFIC_TIMEOUT = 2.0
    sending.apply_study(study)
    assert len(fake_prolific.log("POST", "bulk-approve")) == calls
    assert LedgerEntry.objects.exclude(state="confirmed").count() == 0
    assert len(fake_prolific.payments) == 3


def test_the_payment_task_says_when_it_stops_retrying(study_setup, fake_prolific):
    """After its last retry Celery raised MaxRetriesExceeded: the job said 'succeeded' and nothing looked at the
    rows left waiting again."""
    from annotation_site.crowd.tasks import apply_payments
    from annotation_site.jobs import services as jobs
    from annotation_site.jobs.models import Job

    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "bulk-approve", kind="drop", times=50)  # the outcome never known: rows stay sent
    job = jobs.create_job("crowd-payments", scope=f"crowd-study:{study.pk}", total=1)
    from annotation_site.crowd.tasks import UNSETTLED_RETRIES

    apply_payments.push_request(retries=40, is_eager=False)  # (busy retries before: they do not count)
    try:
        result = apply_payments.run(study.pk, str(job.pk), unsettled_tries=UNSETTLED_RETRIES)
    finally:
        apply_payments.pop_request()
    assert result["unsettled"] == 3
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "stopped checking after 12 retries: 3 row(s)" in job.error


def test_not_paid_without_the_platform_s_credentials_is_a_clear_refusal(study_setup, fake_prolific, monkeypatch):
    """Asking Prolific again needs its API token: without it the API answered 500."""
    dispatch = in_doubt_dispatch(study_setup, fake_prolific)

    without_api_token(monkeypatch)
    with pytest.raises(ValueError, match="could not be asked again .*PROLIFIC_API_TOKEN is not set"):
        sending.resolve_dispatch(dispatch, paid=False)
    dispatch.refresh_from_db()
    assert dispatch.state == Dispatch.State.IN_DOUBT


def test_planning_failed_rows_again_without_the_api_token_is_a_clear_refusal(study_setup, fake_prolific, monkeypatch):
    toy, target, study = study_setup
    plan_and_record(toy, target, study)
    fake_prolific.fail("POST", "bulk-approve", status=401, times=1)
    sending.apply_study(study)
    before = sorted(LedgerEntry.objects.values_list("pk", "state"))

    without_api_token(monkeypatch)
    with pytest.raises(ValueError, match="cannot be asked .*PROLIFIC_API_TOKEN is not set.*nothing changed"):
        sending.plan_failed_again(study)
    assert sorted(LedgerEntry.objects.values_list("pk", "state")) == before
