"""MTurk through boto3, with botocore's Stubber: the service model validates every request (names, types,
lengths) and the expected parameters are checked exactly. Also the HIT page parameters and the submit host
allow-list."""

from datetime import datetime, timezone
from decimal import Decimal

import boto3
import pytest
from botocore.stub import ANY, Stubber

from annotation_site.crowd import ledger, payments, sending
from annotation_site.crowd.config import MissingCredential
from annotation_site.crowd.models import BonusScope, LedgerEntry, Policy, Study
from annotation_site.crowd.providers.base import AdmissionRefused
from annotation_site.crowd.providers.mturk import MTurkProvider, archive_hit, mturk_client, submit_url

from .conftest import FAILED, PASSED, worked

NOW = datetime(2026, 8, 1, 12, 0, tzinfo=timezone.utc)


def client():
    return boto3.client(
        "mturk",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        endpoint_url="https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    )


def assignment(aid, hit, worker, status="Submitted"):
    return {
        "AssignmentId": aid,
        "WorkerId": worker,
        "HITId": hit,
        "AssignmentStatus": status,
        "AcceptTime": NOW,
        "SubmitTime": NOW,
        "Answer": "<QuestionFormAnswers/>",
    }


def test_archive_pages_through_assignments_and_bonuses():
    mturk = client()
    hit = "3" + "H" * 29
    with Stubber(mturk) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [assignment("A" * 30, hit, "W1")], "NextToken": "page2", "NumResults": 1},
            {"HITId": hit, "MaxResults": 100, "AssignmentStatuses": ["Submitted", "Approved", "Rejected"]},
        )
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [assignment("B" * 30, hit, "W2", "Approved")], "NumResults": 1},
            {
                "HITId": hit,
                "MaxResults": 100,
                "AssignmentStatuses": ["Submitted", "Approved", "Rejected"],
                "NextToken": "page2",
            },
        )
        stub.add_response(
            "list_bonus_payments",
            {
                "BonusPayments": [
                    {
                        "WorkerId": "W2",
                        "BonusAmount": "0.50",
                        "AssignmentId": "B" * 30,
                        "Reason": "thanks",
                        "GrantTime": NOW,
                    }
                ],
                "NumResults": 1,
            },
            {"HITId": hit, "MaxResults": 100},
        )
        archived = archive_hit(mturk, hit)
        stub.assert_no_pending_responses()
    assert [a["WorkerId"] for a in archived["assignments"]] == ["W1", "W2"]
    assert archived["bonus_payments"][0]["BonusAmount"] == "0.50"


def test_the_service_model_validates_requests():
    mturk = client()
    with Stubber(mturk) as stub:
        stub.add_response("send_bonus", {})
        with pytest.raises(Exception) as refused:
            mturk.send_bonus(
                WorkerId="W1", BonusAmount=0.5, AssignmentId="A" * 30, Reason="x", UniqueRequestToken="t"
            )  # BonusAmount must be a string
    assert "BonusAmount" in str(refused.value)


def test_missing_credentials_name_the_variable(settings):
    settings.MTURK_ACCESS_KEY_ID = ""
    with pytest.raises(MissingCredential, match="MTURK_ACCESS_KEY_ID"):
        mturk_client()


@pytest.mark.parametrize(
    "given, expected",
    [
        ("https://www.mturk.com", "https://www.mturk.com/mturk/externalSubmit"),
        ("https://workersandbox.mturk.com/", "https://workersandbox.mturk.com/mturk/externalSubmit"),
        ("http://www.mturk.com", None),
        ("https://evil.example", None),
        ("https://www.mturk.com.evil.example", None),
        ("https://user@www.mturk.com", None),
        ("https://www.mturk.com:8443", None),
        ("", None),
    ],
)
def test_submit_host_allow_list(given, expected):
    assert submit_url(given) == expected


def test_hit_page_parameters():
    provider = MTurkProvider(Study(name="m", provider="mturk"), client=client())
    preview = provider.admit({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
    assert preview.preview and preview.unit_id == "H1"
    accepted = provider.admit(
        {"assignmentId": "A1", "hitId": "H1", "workerId": "W1", "turkSubmitTo": "https://workersandbox.mturk.com"}
    )
    assert (accepted.platform_id, accepted.submission_id, accepted.extra["submit_url"]) == (
        "W1",
        "A1",
        "https://workersandbox.mturk.com/mturk/externalSubmit",
    )
    with pytest.raises(AdmissionRefused):
        provider.admit({"assignmentId": "A1", "hitId": "H1", "workerId": "W1", "turkSubmitTo": "https://x.example"})


@pytest.mark.django_db
def test_payments_through_the_mturk_api_exactly_once(toy, monkeypatch):
    target = toy.add("mt", [(str(i), 1) for i in range(1, 4)])
    study = Study.objects.create(
        name="mt-batch",
        provider="mturk",
        protocol="toy",
        object_id=target.object_id,
        target_name="mt",
        status="published",
        bonus_scope=BonusScope.PER_HIT,
        bonus_amount=Decimal("0.25"),
        currency="USD",
    )
    good = worked(toy, target, study, None, "WGOOD", qc=PASSED)
    bad = worked(toy, target, study, None, "WBAD", qc=FAILED)
    for participation, aid in ((good, "A" * 30), (bad, "B" * 30)):
        participation.external_submission_id = aid
        participation.save()
    decisions = payments.preview(
        toy, target, policy=Policy.APPROVE_PASSING, bonus_scope=BonusScope.PER_HIT, bonus_amount=Decimal("0.25")
    )
    payments.record(target, decisions, policy=Policy.APPROVE_PASSING)
    bonus = LedgerEntry.objects.get(kind="bonus")
    mturk = client()
    with Stubber(mturk) as stub:
        # rows are sent in the order they were recorded (by worker id: WBAD, then WGOOD)
        stub.add_response("reject_assignment", {}, {"AssignmentId": "B" * 30, "RequesterFeedback": ANY})
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A" * 30, "RequesterFeedback": ANY})
        stub.add_client_error("send_bonus", service_error_code="ServiceFault", http_status_code=500)
        # the crashed-or-failed bonus is reconciled first: not among the bonus payments, so sent again with the
        # same UniqueRequestToken
        stub.add_response(
            "list_bonus_payments", {"BonusPayments": [], "NumResults": 0}, {"AssignmentId": "A" * 30, "MaxResults": 100}
        )
        stub.add_response(
            "send_bonus",
            {},
            {
                "WorkerId": "WGOOD",
                "BonusAmount": "0.25",
                "AssignmentId": "A" * 30,
                "Reason": "Bonus for your work",
                "UniqueRequestToken": bonus.request_token,
            },
        )
        provider = MTurkProvider(study, client=mturk)
        sending.apply_study(study, provider)
        assert LedgerEntry.objects.get(kind="bonus").state == "sent"
        sending.apply_study(study, provider)
        sending.apply_study(study, provider)  # nothing left: no call (the Stubber would fail on one)
        stub.assert_no_pending_responses()
    assert set(LedgerEntry.objects.values_list("state", flat=True)) == {"confirmed"}


@pytest.mark.django_db
def test_an_approval_that_went_through_before_a_crash_is_confirmed_not_repeated(toy, monkeypatch):
    target = toy.add("mt2", [("1", 1)])
    study = Study.objects.create(
        name="mt2", provider="mturk", protocol="toy", object_id=target.object_id, target_name="mt2", status="published"
    )
    participation = worked(toy, target, study, None, "W9", qc=PASSED)
    participation.external_submission_id = "C" * 30
    participation.save()
    payments.record(target, payments.preview(toy, target, policy=Policy.APPROVE_ALL), policy=Policy.APPROVE_ALL)
    mturk = client()

    class Crash(BaseException):
        pass

    def crash(point):
        raise Crash(point)

    with Stubber(mturk) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "C" * 30, "RequesterFeedback": ANY})
        monkeypatch.setattr(ledger, "checkpoint", crash)
        with pytest.raises(Crash):
            sending.apply_study(study, MTurkProvider(study, client=mturk))
        monkeypatch.setattr(ledger, "checkpoint", lambda point: None)
        stub.add_response(
            "get_assignment",
            {"Assignment": assignment("C" * 30, "H" * 30, "W9", "Approved"), "HIT": {"HITId": "H" * 30}},
            {"AssignmentId": "C" * 30},
        )
        # the row was confirmed before the crash point, so nothing is called; force the 'sent' case:
        LedgerEntry.objects.update(state="sent")
        sending.apply_study(study, MTurkProvider(study, client=mturk))
        stub.assert_no_pending_responses()
    assert LedgerEntry.objects.get().state == "confirmed"


@pytest.mark.django_db
def test_a_failed_bonus_mturk_had_granted_is_confirmed_when_planned_again_not_paid_twice(toy):
    """A bonus sent again after a crash is refused (its token was granted already); when the lookup that tells
    fails too, the row is recorded failed although paid. Planning failed rows again looks first."""
    target = toy.add("mt3", [("1", 1), ("2", 1)])
    study = Study.objects.create(
        name="mt3",
        provider="mturk",
        protocol="toy",
        object_id=target.object_id,
        target_name="mt3",
        status="published",
        bonus_scope=BonusScope.PER_HIT,
        bonus_amount=Decimal("0.25"),
        currency="USD",
    )
    for worker, aid in (("WPAID", "D" * 30), ("WNOT", "E" * 30)):
        participation = worked(toy, target, study, None, worker, qc=PASSED)
        participation.external_submission_id = aid
        participation.save()
    payments.record(
        target,
        payments.preview(
            toy, target, policy=Policy.APPROVE_ALL, bonus_scope=BonusScope.PER_HIT, bonus_amount=Decimal("0.25")
        ),
        policy=Policy.APPROVE_ALL,
    )
    LedgerEntry.objects.filter(kind="decision").update(state="confirmed")
    LedgerEntry.objects.filter(kind="bonus").update(
        state="failed", attempts=1, error="RequestError: token used already"
    )  # sent once
    paid = {
        "BonusPayments": [{"WorkerId": "WPAID", "BonusAmount": "0.25", "AssignmentId": "D" * 30, "Reason": "x"}],
        "NumResults": 1,
    }
    mturk = client()
    with Stubber(mturk) as stub:
        # (rows in the order recorded: by worker id, WNOT then WPAID)
        stub.add_client_error(
            "list_bonus_payments",
            service_error_code="ServiceFault",
            http_status_code=500,
            expected_params={"AssignmentId": "E" * 30, "MaxResults": 100},
        )
        stub.add_response("list_bonus_payments", paid, {"AssignmentId": "D" * 30, "MaxResults": 100})
        counts = sending.plan_failed_again(study, MTurkProvider(study, client=mturk))
        stub.assert_no_pending_responses()
    assert counts == {"planned": 0, "confirmed": 1, "unchecked": 1}
    states = dict(LedgerEntry.objects.filter(kind="bonus").values_list("submission_id", "state"))
    assert states == {"D" * 30: "confirmed", "E" * 30: "failed"}  # paid: never sent again; unknown: stays
