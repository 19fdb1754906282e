"""Amazon Mechanical Turk through boto3's ``mturk`` client. AWS closed MTurk on 2026-09-30 (stopped taking new
requesters on 2026-07-30; approvals and bonuses ended 2026-10-30; transaction history readable until
2027-01-28): this provider serves the years of MTurk-collected judgments (archive a past campaign's assignments
and bonuses while AWS still serves them) and any endpoint that speaks the same API (``MTURK_ENDPOINT_URL``).

- The HIT page (``/crowd/s/TOKEN/?unit=...``) understands ``assignmentId``, ``hitId``, ``workerId`` and
  ``turkSubmitTo``: ``ASSIGNMENT_ID_NOT_AVAILABLE`` is a preview (inputs disabled); a finished assignment is
  posted to ``turkSubmitTo + /mturk/externalSubmit`` only when that host is allow-listed (``MTURK_SUBMIT_HOSTS``).
- Payments: approve / reject per assignment (``get_assignment`` tells a crashed run what happened), bonuses with
  ``send_bonus`` carrying the row's ``UniqueRequestToken`` (MTurk refuses a repeated token for 24 hours), and
  ``list_bonus_payments`` checked before a bonus left ``sent`` is sent again.
"""

from decimal import Decimal
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from .. import config, ledger, mturk_formats
from ..models import LedgerEntry
from .base import Admission, AdmissionRefused, CrowdProvider

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"


def mturk_client():
    """A boto3 mturk client on the configured endpoint (``MTURK_ENDPOINT_URL``; AWS's production endpoint when
    empty) with the MTurk credentials (``MTURK_ACCESS_KEY_ID`` / ``MTURK_SECRET_ACCESS_KEY``)."""
    return boto3.client(
        "mturk",
        region_name=config.setting("MTURK_REGION") or "us-east-1",
        endpoint_url=config.setting("MTURK_ENDPOINT_URL") or None,
        aws_access_key_id=config.require("MTURK_ACCESS_KEY_ID", "MTurk"),
        aws_secret_access_key=config.require("MTURK_SECRET_ACCESS_KEY", "MTurk"),
        config=Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=10, read_timeout=30),
    )


def submit_url(turk_submit_to):
    """``turkSubmitTo/mturk/externalSubmit`` when ``turk_submit_to`` is an allow-listed https host, else None."""
    parts = urlsplit(turk_submit_to or "")
    allowed = config.setting("MTURK_SUBMIT_HOSTS") or ["www.mturk.com", "workersandbox.mturk.com"]
    if parts.scheme != "https" or parts.hostname not in allowed or parts.username or parts.port not in (None, 443):
        return None
    return f"https://{parts.hostname}/mturk/externalSubmit"


def pages(call, key, **kwargs):
    """Every item of a paginated mturk list call (``NextToken``)."""
    token = None
    while True:
        page = call(**kwargs, **({"NextToken": token} if token else {}))
        yield from page.get(key, [])
        token = page.get("NextToken")
        if not token:
            return


def archive_hit(client, hit_id):
    """One HIT's assignments (every status) and bonus payments, as MTurk serves them."""
    assignments = list(
        pages(
            client.list_assignments_for_hit,
            "Assignments",
            HITId=hit_id,
            MaxResults=100,
            AssignmentStatuses=["Submitted", "Approved", "Rejected"],
        )
    )
    bonuses = list(pages(client.list_bonus_payments, "BonusPayments", HITId=hit_id, MaxResults=100))
    return {"hit_id": hit_id, "assignments": assignments, "bonus_payments": bonuses}


def _platform_worker(entry):
    if entry.participation_id:
        return entry.participation.participant.platform_id
    return entry.worker_id.split(":", 1)[1] if entry.worker_id.startswith("mturk:") else entry.worker_id


def _code(exc):
    return exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else ""


class MTurkProvider(CrowdProvider):
    name = "mturk"
    make_client = staticmethod(mturk_client)

    # --- the HIT page ------------------------------------------------------------------------------------------

    def admit(self, params):
        assignment = (params.get("assignmentId") or "").strip()
        hit = (params.get("hitId") or "").strip()
        if assignment == PREVIEW_ASSIGNMENT or (not assignment and hit):
            return Admission(platform_id="", unit_id=hit, preview=True)
        worker = (params.get("workerId") or "").strip()
        if not (assignment and hit and worker):
            raise AdmissionRefused(
                "invalid", "Open this HIT from Mechanical Turk (assignmentId, hitId and workerId are missing)."
            )
        if not (mturk_formats.ENTITY_ID.match(assignment) and mturk_formats.ENTITY_ID.match(hit)):
            raise AdmissionRefused(
                "invalid", "This HIT was opened with an assignmentId or hitId that Mechanical Turk does not issue."
            )
        target = submit_url(params.get("turkSubmitTo"))
        if target is None:
            raise AdmissionRefused(
                "invalid",
                "This HIT was opened from an address that is not allowed to receive its results (turkSubmitTo).",
            )
        return Admission(
            platform_id=worker,
            submission_id=assignment,
            unit_id=hit,
            extra={"submit_url": target, "unit": (params.get("unit") or "").strip()},
        )

    def finish(self, participation, code):
        return {
            "mode": "submit",
            "code": code,
            "url": participation_submit_url(participation),
            "fields": {"assignmentId": participation.external_submission_id, "completion_code": code},
        }

    # --- publishing (for endpoints that still take HITs) ------------------------------------------------------

    def create_hit(self, unit, url, max_assignments, *, lifetime_seconds=7 * 24 * 3600):
        from ..mturk_formats import external_question

        study = self.study
        response = self.client.create_hit(
            MaxAssignments=int(max_assignments),
            LifetimeInSeconds=int(lifetime_seconds),
            AssignmentDurationInSeconds=max(60 * int(study.estimated_minutes) * 3, 600),
            AutoApprovalDelayInSeconds=7 * 24 * 3600,
            Reward=f"{Decimal(study.reward):.2f}",
            Title=(study.title or study.target_name)[:128],
            Description=(study.description or study.title or study.target_name)[:2000],
            Keywords="video, captions, rating",
            Question=external_question(url),
            RequesterAnnotation=f"{study.name}:{unit.key}"[:255],
            UniqueRequestToken=f"{study.pk}-{unit.key}"[:64],
        )
        return response["HIT"]["HITId"]

    def block(self, participant, reason):
        return self.client.create_worker_block(WorkerId=participant.platform_id, Reason=reason[:1024])

    # --- payments ----------------------------------------------------------------------------------------------

    def send(self, decisions, bonuses):
        for entry in decisions + bonuses:
            rows = ledger.claim([entry])
            if not rows:
                continue
            row = rows[0]
            if not row.submission_id:
                ledger.fail(rows, "no MTurk AssignmentId is known for this assignment")
                continue
            try:
                if row.action == LedgerEntry.Action.APPROVE:
                    self.client.approve_assignment(AssignmentId=row.submission_id, RequesterFeedback=row.reason[:1024])
                elif row.action == LedgerEntry.Action.REJECT:
                    self.client.reject_assignment(AssignmentId=row.submission_id, RequesterFeedback=row.reason[:1024])
                else:
                    self.client.send_bonus(
                        WorkerId=_platform_worker(row),
                        BonusAmount=f"{row.amount:.2f}",
                        AssignmentId=row.submission_id,
                        Reason=(row.reason or "Bonus")[:1024],
                        UniqueRequestToken=row.request_token[:64],
                    )
            except ClientError as exc:
                if _code(exc) == "ServiceFault":
                    ledger.note(rows, exc)
                else:
                    self._settle_refused(row, exc)
            except BotoCoreError as exc:  # connection trouble: outcome unknown, reconciled next run
                ledger.note(rows, exc)
            else:
                ledger.confirm(rows)
            ledger.checkpoint("after-mturk-call")

    def _settle_refused(self, row, exc):
        """A RequestError may mean 'already done' (a crashed run's call went through): look before failing."""
        try:
            if self._done(row):
                ledger.confirm([row])
                return
        except (ClientError, BotoCoreError):
            pass
        ledger.fail([row], exc)

    def _done(self, row):
        if row.action == LedgerEntry.Action.BONUS:
            payments = pages(
                self.client.list_bonus_payments, "BonusPayments", AssignmentId=row.submission_id, MaxResults=100
            )
            return any(
                Decimal(p.get("BonusAmount", "0")) == row.amount and p.get("WorkerId") == _platform_worker(row)
                for p in payments
            )
        status = self.client.get_assignment(AssignmentId=row.submission_id)["Assignment"]["AssignmentStatus"]
        return status == ("Approved" if row.action == LedgerEntry.Action.APPROVE else "Rejected")

    def already_done(self, row):
        if not row.submission_id:
            return False
        try:
            return self._done(row)
        except (ClientError, BotoCoreError):
            return None

    def reconcile(self, sent_decisions, sent_bonuses):
        for row in sent_decisions + sent_bonuses:
            try:
                done = self._done(row)
            except (ClientError, BotoCoreError) as exc:
                ledger.note([row], exc)
                continue
            if done:
                ledger.confirm([row])
            else:
                ledger.unsend([row])  # not done: send again (bonuses with the same UniqueRequestToken)


def participation_submit_url(participation):
    """The externalSubmit URL recorded at admission, checked again against the allow-list."""
    return submit_url(participation.submit_url.rsplit("/mturk/externalSubmit", 1)[0]) or ""
