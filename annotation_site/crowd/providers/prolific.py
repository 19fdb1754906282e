"""Prolific: studies, admission (submission lookup or Prolific's signed JWT), completion redirect, submissions,
approvals, rejections and bonuses. The money flow is in docs/crowd.md; in short:

- decisions: rows are claimed (planned -> sent) before the call; approvals go in bulk (``bulk-approve``),
  rejections one by one (``transition`` REJECT); both are idempotent on Prolific, so a row left ``sent`` by a
  crash is checked (GET submission) and, when the platform shows nothing happened, sent again;
- bonuses: a Dispatch is prepared with its rows, the bonus batch is created and its id stored (CREATED), then
  the dispatch moves CREATED -> PAYING in one conditional UPDATE (only one run can win it) and the pay call is
  made once. A PAYING dispatch found by a later run is never paid again: it is confirmed from the submissions'
  ``bonus_payments`` when they show the bonus, otherwise it becomes IN_DOUBT for a person to resolve.
"""

import logging
from decimal import Decimal
from functools import partial

import jwt
from django.db import transaction
from django.db.models import Q

from .. import config, ledger
from ..models import Dispatch, LedgerEntry
from .base import Admission, AdmissionRefused, CrowdProvider, SubmissionInfo
from .prolific_client import OutcomeUnknown, ProlificClient, ProlificError, TransientError

log = logging.getLogger(__name__)

APPROVE_BATCH = 100
ENTRY_PARAMETERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
_jwks_cache = {}


def _rejection(row):
    return row.submission_id, row.reason, row.rejection_category


def _cents(amount):
    return int((Decimal(amount) * 100).to_integral_value())


class ProlificProvider(CrowdProvider):
    name = "prolific"
    make_client = ProlificClient

    # --- the study -----------------------------------------------------------------------------------------

    def study_fields(self, places):
        study = self.study
        if not study.completion_code:
            raise ProlificError("the study needs a completion code (Study.completion_code)")
        codes = [{"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}]
        if study.screened_out_code:
            codes.append(
                {
                    "code": study.screened_out_code,
                    "code_type": "SCREENED_OUT",
                    "actions": [{"action": "MANUALLY_REVIEW"}],
                }
            )
        return {
            "name": study.title or study.target_name,
            "internal_name": study.name,
            "description": study.description or study.title or study.target_name,
            "external_study_url": f"{self.entry_url()}?{ENTRY_PARAMETERS}",
            "prolific_id_option": "url_parameters",
            "completion_codes": codes,
            "total_available_places": int(places),
            "estimated_completion_time": int(study.estimated_minutes),
            "reward": _cents(study.reward),
            "device_compatibility": ["desktop", "tablet", "mobile"],
        }

    def create_study(self, places):
        created = self.client.create_study(self.study_fields(places))
        return created.get("id", "")

    def publish(self):
        return self.client.transition_study(self.study.external_id, "PUBLISH")

    def pause(self):
        return self.client.transition_study(self.study.external_id, "PAUSE")

    def add_places(self, places):
        return self.client.update_study(self.study.external_id, {"total_available_places": int(places)})

    # --- admission -------------------------------------------------------------------------------------------

    def admit(self, params):
        pid = (params.get("PROLIFIC_PID") or "").strip()
        study_id = (params.get("STUDY_ID") or "").strip()
        session_id = (params.get("SESSION_ID") or "").strip()
        if not (pid and study_id and session_id):
            raise AdmissionRefused(
                "invalid", "This link must be opened from Prolific (PROLIFIC_PID, STUDY_ID and SESSION_ID are missing)."
            )
        if self.study.external_id and study_id != self.study.external_id:
            raise AdmissionRefused("invalid", "This link belongs to another Prolific study.")
        token = params.get(config.setting("PROLIFIC_JWT_PARAMETER", "prolific_token"))
        if token and config.setting("PROLIFIC_JWT_AUDIENCE"):
            self._verify_jwt(token, pid, study_id, session_id)
        else:
            self._verify_submission(pid, study_id, session_id)
        return Admission(platform_id=pid, submission_id=session_id)

    def _verify_submission(self, pid, study_id, session_id):
        try:
            submission = self.client.get_submission(session_id)
        except ProlificError:
            raise AdmissionRefused(
                "unverified", "Prolific does not know this session. Please start the study from Prolific again."
            ) from None
        except TransientError:
            raise AdmissionRefused(
                "unavailable", "Prolific cannot be reached right now; please try again in a minute."
            ) from None
        owner = submission.get("participant") or submission.get("participant_id")
        if owner != pid or submission.get("study_id") != study_id:
            raise AdmissionRefused("unverified", "This Prolific session belongs to someone else.")
        status = submission.get("status", "")
        if status not in ("ACTIVE", ""):
            raise AdmissionRefused(
                "closed", f"Your Prolific submission is {status.lower()}; it can no longer be worked on."
            )

    def _verify_jwt(self, token, pid, study_id, session_id):
        try:
            header = jwt.get_unverified_header(token)
            key = self._public_key(header.get("kid"))
            claims = jwt.decode(
                token,
                key=key,
                algorithms=["RS256"],
                audience=config.setting("PROLIFIC_JWT_AUDIENCE"),
                options={"require": ["exp", "aud"]},
            )
        except (jwt.PyJWTError, KeyError, ValueError) as exc:
            raise AdmissionRefused("unverified", f"The signed Prolific link could not be verified ({exc}).") from None
        except TransientError:
            raise AdmissionRefused(
                "unavailable", "Prolific cannot be reached right now; please try again in a minute."
            ) from None
        carried = claims.get("prolific") or {}
        expected = {"PROLIFIC_PID": pid, "STUDY_ID": study_id, "SESSION_ID": session_id}
        # every value the study URL asks for must be signed, and equal: a token without SESSION_ID let the
        # address name any submission, so the work (and its payment) could be put on someone else's
        if not isinstance(carried, dict) or any(carried.get(k) != v for k, v in expected.items()):
            raise AdmissionRefused("unverified", "The signed Prolific link was made for someone else.")

    def _public_key(self, kid):
        keys = _jwks_cache.get(self.client.base_url)
        if keys is None or kid not in keys:
            keys = {k["kid"]: jwt.PyJWK(k).key for k in self.client.jwks().get("keys", [])}
            _jwks_cache[self.client.base_url] = keys
        return keys[kid]

    def finish(self, participation, code):
        base = config.setting("PROLIFIC_COMPLETION_URL") or "https://app.prolific.com/submissions/complete"
        return {"mode": "redirect", "url": f"{base}?cc={self.study.completion_code}", "code": code}

    def submissions(self):
        return [
            SubmissionInfo(
                submission_id=s.get("id", ""),
                platform_id=s.get("participant_id") or s.get("participant", ""),
                status=s.get("status", ""),
                bonus_cents=list(s.get("bonus_payments") or []),
            )
            for s in self.client.list_submissions(self.study.external_id)
        ]

    # --- payments --------------------------------------------------------------------------------------------

    def send(self, decisions, bonuses):
        missing = [e for e in decisions + bonuses if not e.submission_id]
        if missing:
            ledger.fail(ledger.claim(missing), "no Prolific submission is known for this assignment")
        approvals = [e for e in decisions if e.action == LedgerEntry.Action.APPROVE and e.submission_id]
        accepted = []  # rows whose request Prolific accepted: settled from the submissions' statuses below
        for start in range(0, len(approvals), APPROVE_BATCH):
            # only rows still to approve: one a recording changed to a rejection meanwhile stays planned
            rows = ledger.claim(approvals[start : start + APPROVE_BATCH], action=LedgerEntry.Action.APPROVE)
            if rows and self._call(rows, lambda rows=rows: self.client.bulk_approve([r.submission_id for r in rows])):
                accepted += rows
            ledger.checkpoint("after-approve-batch")
        for entry in [e for e in decisions if e.action == LedgerEntry.Action.REJECT and e.submission_id]:
            rows = ledger.claim([entry], action=LedgerEntry.Action.REJECT)
            if rows and self._call(rows, partial(self.client.reject, *_rejection(rows[0]))):
                accepted += rows
            ledger.checkpoint("after-reject")
        if accepted:
            self._settle_decisions(accepted)
        payable = [e for e in bonuses if e.submission_id]
        if payable:
            self._bonus(payable)

    def _call(self, rows, call):
        """Make a decision's call; True when Prolific accepted it (the rows stay sent until settled)."""
        try:
            call()
        except ProlificError as exc:
            ledger.fail(rows, exc)
        except TransientError as exc:
            ledger.note(rows, exc)  # stays sent: the next run checks the platform before sending again
        else:
            return True
        return False

    def _settle_decisions(self, rows):
        """Confirm decisions Prolific accepted only once their submissions show them: ``bulk-approve`` answers
        "in progress" and skips any submission that is not awaiting review (returned, still active, already
        decided), and an approval recorded as confirmed lets its bonus be paid. A submission still awaiting
        review stays sent (checked again on the next run: with a broker the task retries; on the embedded
        default, without one, the next "send" does it); one in another state fails with that state."""
        statuses = self._statuses(rows)
        if statuses is None:
            return
        confirmed, waiting = [], []
        for row in rows:
            wanted = "APPROVED" if row.action == LedgerEntry.Action.APPROVE else "REJECTED"
            status = statuses.get(row.submission_id)
            if status == wanted:
                confirmed.append(row)
            elif status in (None, "AWAITING REVIEW"):
                waiting.append(row)
            else:
                verb = "approve" if row.action == LedgerEntry.Action.APPROVE else "reject"
                ledger.fail([row], f"Prolific did not {verb} it: the submission is {status}, not {wanted}")
        ledger.confirm(confirmed)
        ledger.note(waiting, "accepted by Prolific, not applied yet: checked again on the next run")

    def _bonus(self, entries):
        with transaction.atomic():
            dispatch = Dispatch.objects.create(study=self.study, kind="bonus")
            rows = ledger.claim(entries)
            LedgerEntry.objects.filter(pk__in=[r.pk for r in rows]).update(dispatch=dispatch)
        if not rows:
            dispatch.delete()
            return
        self._advance(dispatch)

    def _advance(self, dispatch):
        """Take a bonus dispatch as far as it can safely go."""
        rows = list(dispatch.entries.filter(state=LedgerEntry.State.SENT).order_by("pk"))
        if dispatch.state == Dispatch.State.PREPARED:
            if not rows:
                Dispatch.objects.filter(pk=dispatch.pk).update(state=Dispatch.State.FAILED, error="no rows")
                return
            try:
                created = self.client.create_bonus_payments(
                    self.study.external_id, [(r.submission_id, r.amount) for r in rows]
                )
            except ProlificError as exc:
                ledger.fail(rows, exc)
                Dispatch.objects.filter(pk=dispatch.pk).update(state=Dispatch.State.FAILED, error=str(exc))
                return
            except TransientError as exc:
                ledger.note(rows, exc)
                return
            ledger.checkpoint("after-bonus-create")
            Dispatch.objects.filter(pk=dispatch.pk, state=Dispatch.State.PREPARED).update(
                state=Dispatch.State.CREATED, external_id=str(created.get("id", ""))
            )
            dispatch.refresh_from_db()
            ledger.checkpoint("after-bonus-created-recorded")
        if dispatch.state == Dispatch.State.CREATED:
            if not Dispatch.objects.filter(pk=dispatch.pk, state=Dispatch.State.CREATED).update(
                state=Dispatch.State.PAYING
            ):
                return  # another run is paying it
            try:
                self.client.pay_bonus_payments(dispatch.external_id)
            except ProlificError as exc:  # refused: nothing was paid
                ledger.fail(rows, exc)
                Dispatch.objects.filter(pk=dispatch.pk).update(state=Dispatch.State.FAILED, error=str(exc))
                return
            except TransientError as exc:  # OutcomeUnknown or rate limited for too long: never pay again
                ledger.note(rows, exc)
                Dispatch.objects.filter(pk=dispatch.pk).update(error=str(exc))
                return
            ledger.checkpoint("after-bonus-pay")
            Dispatch.objects.filter(pk=dispatch.pk).update(state=Dispatch.State.DONE, error="")
            ledger.confirm(rows)

    def _statuses(self, rows):
        """{submission id: status} of the study's submissions, from one listing (pages of 100), or None after
        noting why on ``rows``: one GET per row made a run of a large study thousands of calls."""
        try:
            return {s.get("id"): s.get("status", "") for s in self.client.list_submissions(self.study.external_id)}
        except (ProlificError, TransientError) as exc:
            ledger.note(rows, f"the outcome is checked on the next run ({exc})")
            return None

    def reconcile(self, sent_decisions, sent_bonuses):
        known = [e for e in sent_decisions if e.submission_id]
        ledger.fail(
            [e for e in sent_decisions if not e.submission_id], "no Prolific submission is known for this assignment"
        )
        statuses = self._statuses(known) if known else {}
        if statuses is None:  # the listing failed: the rows are noted and checked on the next run
            known, statuses = [], {}
        for entry in known:
            status = statuses.get(entry.submission_id)
            if status is None:  # not in the study's listing: ask for it alone
                try:
                    status = self.client.get_submission(entry.submission_id).get("status", "")
                except ProlificError as exc:
                    ledger.fail([entry], exc)
                    continue
                except TransientError as exc:
                    ledger.note([entry], exc)
                    continue
            wanted = "APPROVED" if entry.action == LedgerEntry.Action.APPROVE else "REJECTED"
            if status == wanted:
                ledger.confirm([entry])
            elif status == "AWAITING REVIEW":
                ledger.unsend([entry])  # nothing happened: send again (transitions are idempotent anyway)
            else:
                ledger.fail([entry], f"the submission is {status}, not {wanted}")
        open_states = [Dispatch.State.PREPARED, Dispatch.State.CREATED, Dispatch.State.PAYING]
        for dispatch in Dispatch.objects.filter(study=self.study, kind="bonus", state__in=open_states).order_by("pk"):
            if dispatch.state == Dispatch.State.PAYING:
                self._settle_paying(dispatch)
            else:
                self._advance(dispatch)
        # rows left sent without a dispatch cannot happen (claimed and attached in one transaction); be explicit
        for entry in [e for e in sent_bonuses if e.dispatch_id is None]:
            ledger.unsend([entry])

    def _settle_paying(self, dispatch):
        """A dispatch whose pay call may have gone through: confirm it from the submissions' bonus payments,
        or put it IN_DOUBT. It is never paid a second time automatically."""
        rows = list(dispatch.entries.filter(state=LedgerEntry.State.SENT).order_by("pk"))
        try:
            paid = all(self._bonus_shown(rows))
        except (ProlificError, TransientError) as exc:
            ledger.note(rows, exc)
            return
        if paid:
            Dispatch.objects.filter(pk=dispatch.pk).update(state=Dispatch.State.DONE, error="")
            ledger.confirm(rows)
        else:
            Dispatch.objects.filter(pk=dispatch.pk).update(
                state=Dispatch.State.IN_DOUBT,
                error="the pay call may have reached Prolific but the bonuses are not visible yet: check the study's "
                "bonus payments on Prolific, then resolve (crowd_ledger resolve)",
            )

    def already_done(self, row):
        """A failed decision: whether its submission shows it; a failed bonus was refused before it was paid
        (its creation or its pay call refused), so it is not done."""
        if row.kind == LedgerEntry.Kind.BONUS or not row.submission_id:
            return False
        try:
            status = self.client.get_submission(row.submission_id).get("status", "")
        except (ProlificError, TransientError):
            return None
        return status == ("APPROVED" if row.action == LedgerEntry.Action.APPROVE else "REJECTED")

    def _bonus_shown(self, rows):
        """For each bonus row, whether its submission's bonus payments show its amount (one GET per row)."""
        for r in rows:
            yield _cents(r.amount) in (self.client.get_submission(r.submission_id).get("bonus_payments") or [])

    def shows_any_paid(self, dispatch):
        rows = list(dispatch.entries.filter(state=LedgerEntry.State.SENT).order_by("pk"))
        return any(self._bonus_shown(rows))


def open_dispatch_filter():
    return Q(state__in=[Dispatch.State.PREPARED, Dispatch.State.CREATED, Dispatch.State.PAYING])


__all__ = ["ProlificProvider", "OutcomeUnknown"]
