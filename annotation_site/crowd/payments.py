"""Payments from quality control: a policy turns each assignment's QC outcome into a decision (approve /
reject / review) and maybe a bonus; ``preview`` shows them all with the money before anything is recorded;
``record`` writes the ledger rows (planned); ``sending.apply_study`` sends them through the study's provider.

Policies (``Study.policy``):
- ``approve-all``: every completed assignment is approved;
- ``approve-passing``: QC passers approved, QC failures rejected with the study's rejection message, workers
  without enough pairs (``insufficient_data``) or still being assessed (``in_progress``) sent to review;
- ``review``: everything to review.
Unfinished assignments always go to review ("still working"); released ones (returned, timed out, idle) are left
out unless a decision was already sent for them (a rejected HIT that was handed to someone else). Bonuses (``Study.bonus_scope``): per approved
HIT, or per HIT of a worker who passed QC; a bonus is sent only after its assignment's approval is confirmed.

Once a ledger row has been sent it is frozen: later QC changes never change a decision already on its way.
"""

import logging
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.db.models import Exists, OuterRef

from annotation_site.strict_numbers import amount as parse_amount

from . import adapters
from .adapters import QCStatus
from .models import BonusScope, LedgerEntry, LedgerLock, Participation, Policy, Provider, Study

log = logging.getLogger(__name__)

DEFAULT_REJECTION = (
    "Your ratings did not pass the quality control hidden in this task: captions that we know to be wrong were "
    "not rated lower than the correct originals they were made from (a one-sided statistical test over your "
    "ratings), so we cannot use this work."
)


@dataclass
class Decision:
    assignment_key: str
    worker_id: str
    hit_id: str
    action: str  # approve | reject | review
    reason: str
    bonus: Decimal | None
    state: str  # planned (new or recorded, not sent) | sent | confirmed | failed | review
    qc: adapters.QCOutcome
    completed: bool
    participation: Participation | None = None
    bonus_state: str = ""
    bonus_kept: bool = False  # its planned bonus was sent once before: kept, though this run decides another
    notes: list = field(default_factory=list)

    def as_dict(self):
        return {
            "worker_id": self.worker_id,
            "hit_id": self.hit_id,
            "action": self.action,
            "reason": self.reason,
            "bonus": None if self.bonus is None else f"{self.bonus:.2f}",
            "state": self.state,
            "qc": self.qc.as_dict(),
        }


def _qc_reason(qc):
    if qc.p_value is None:
        return f"{qc.status.replace('_', ' ')}"
    return f"{qc.test} p = {qc.p_value:.3g} (threshold {qc.threshold:g}) with {qc.n_pairs} pairs"


def decide(record, policy, rejection_message):
    """(action, reason) for one AssignmentRecord under ``policy``."""
    qc = record.qc
    if not record.completed:
        return "review", "still working: the HIT is not finished"
    if policy == Policy.REVIEW:
        return "review", "policy: review every assignment manually"
    if policy == Policy.APPROVE_ALL:
        return "approve", "completed (policy: approve all)"
    if qc.status == QCStatus.PASSED:
        return "approve", f"passed QC: {_qc_reason(qc)}"
    if qc.status == QCStatus.FAILED:
        return "reject", rejection_message
    if qc.status == QCStatus.INSUFFICIENT_DATA:
        return "review", f"not enough data for QC: {qc.detail or _qc_reason(qc)}"
    return "review", f"QC still in progress: {qc.detail or 'the worker is still working'}"


def bonus_for(action, qc, scope, amount):
    amount = Decimal(amount or 0)
    if action != "approve" or not amount.is_finite() or amount <= 0:
        return None
    if scope not in (BonusScope.PER_HIT, BonusScope.PER_PASSING_HIT):  # none, or a scope nobody defined: no money
        return None
    if scope == BonusScope.PER_PASSING_HIT and qc.status != QCStatus.PASSED:
        return None
    return amount


def max_bonus():
    """The largest bonus per HIT anyone may plan, in the study's currency: ``CAPTIONEVAL_MAX_BONUS`` (100.00)."""
    from . import config

    return Decimal(str(config.setting("CAPTIONEVAL_MAX_BONUS", "100.00")))


def check_bonus(value, *, what, currency=""):
    """``value`` (an amount already read strictly, ``strict_numbers.amount``), or ValueError naming ``what`` when it
    is more than ``max_bonus()``. The one check of a bonus amount wherever one is entered: a study's bonus when it
    is made (``Study.clean``: the API, ``crowd_study create``) and a payment run's (``run_settings``: the payments
    page, the API, ``crowd_payments``). The money columns take up to 999,999.99: a bonus typed as 50 for 0.50,
    or with its digits doubled, was planned and sent."""
    limit = max_bonus()
    if value is not None and value > limit:
        unit = f" {currency}" if currency else ""
        raise ValueError(
            f"{what} must be at most {limit:.2f}{unit} per HIT (the largest bonus allowed, CAPTIONEVAL_MAX_BONUS), "
            f"not {value:.2f}"
        )
    return value


def target_studies(target):
    return Study.objects.filter(protocol=target.protocol, object_id=target.object_id)


def _provider_studies(target):
    """The target's studies on a crowd platform (not a plain ``none`` study), newest first, each with ``used``:
    whether anybody came through it (one query)."""
    return list(
        target_studies(target)
        .exclude(provider=Provider.NONE)
        .annotate(used=Exists(Participation.objects.filter(study=OuterRef("pk"))))
    )


def provider_study(target):
    """The target's study on a crowd platform (not a plain ``none`` study) whose settings a payment run decides
    with, or None: its policy, bonus and rejection message are the run's defaults, its currency the run's. The
    newest one anybody came through; without participants, the newest. (It was the newest study: a draft made
    on another platform after the participants came took over their bonus, policy and currency.)"""
    studies = _provider_studies(target)
    return next((s for s in studies if s.used), studies[0] if studies else None)


PAYMENT_SETTINGS = ("policy", "bonus_scope", "bonus_amount", "currency", "rejection_message")


class MixedSettings(ValueError):
    """The target's participants came through studies that pay them differently: a payment run, which decides
    every assignment of a target with one study's settings, would pay some of them wrongly."""


def mixed_settings(target):
    """Why a payment run on ``target`` cannot decide with one study's settings, or "": its participants came
    through several crowd studies whose payment settings (``PAYMENT_SETTINGS``) differ (one query)."""
    used = [s for s in _provider_studies(target) if s.used]
    if len({tuple(getattr(s, name) for name in PAYMENT_SETTINGS) for s in used}) <= 1:
        return ""
    described = "; ".join(
        f"{s.name} ({s.get_provider_display()}): {s.policy}, bonus {s.bonus_amount} {s.currency} "
        f"({s.bonus_scope})" + (", its own rejection message" if s.rejection_message else "")
        for s in used
    )
    return (
        f"The participants of {target.name} came through {len(used)} crowd studies that pay differently "
        f"({described}). A payment run decides every assignment of {target.name} with one study's settings and "
        "currency, so it would pay some participants wrongly: nothing can be recorded until those studies share "
        "their policy, bonus, currency and rejection message (Django admin: Crowd › Studies)."
    )


@dataclass(frozen=True)
class RunSettings:
    """The policy and bonus a payment run decides with."""

    policy: str
    bonus_scope: str
    bonus_amount: Decimal


RUN_FIELDS = ("policy", "bonus_scope", "bonus_amount")


def run_settings(study, given, labels=None):
    """``(RunSettings, problems)`` of a payment run on a target whose provider study is ``study`` (or None): each
    value ``given`` (a mapping of RUN_FIELDS; missing or empty: not given), else the study's own setting, else
    approve-passing and no bonus. Every entry point (the payments page, the API, ``crowd_payments``) decides
    with these, so none plans other decisions, or drops the study's bonuses, for the same target. A value
    refused is replaced by that default and named in ``problems`` ({label: message}; ``labels`` maps a field to
    the name its entry point shows). The bonus, given or the study's own, is at most ``max_bonus()``
    (``check_bonus``): the study's own over it (a study made before the limit, or with a larger one) is a
    problem too when the run's bonus scope pays a bonus, and no bonus is planned."""
    labels = {name: name for name in RUN_FIELDS} | dict(labels or {})
    default = RunSettings(
        policy=study.policy if study else Policy.APPROVE_PASSING,
        bonus_scope=study.bonus_scope if study else BonusScope.NONE,
        bonus_amount=study.bonus_amount if study else Decimal("0"),
    )
    chosen, problems = {}, {}
    for name, choices in (("policy", Policy.values), ("bonus_scope", BonusScope.values)):
        value = given.get(name)
        if value in (None, ""):
            continue
        if value not in choices:
            problems[labels[name]] = f"{labels[name]} must be one of {', '.join(choices)}, not {str(value)[:40]!r}"
        else:
            chosen[name] = value
    label, currency = labels["bonus_amount"], study.currency if study else ""
    if given.get("bonus_amount") not in (None, ""):
        try:
            chosen["bonus_amount"] = check_bonus(
                parse_amount(given["bonus_amount"], what=label), what=label, currency=currency
            )
        except ValueError as exc:
            problems[label] = str(exc)
    pays_bonus = chosen.get("bonus_scope", default.bonus_scope) != BonusScope.NONE
    if "bonus_amount" not in chosen and pays_bonus:  # a scope that pays no bonus never uses the study's amount
        try:
            check_bonus(default.bonus_amount, what=f"the bonus of study {study} ({label} not given)", currency=currency)
        except ValueError as exc:
            problems.setdefault(label, str(exc))
            chosen["bonus_amount"] = Decimal("0")
    return RunSettings(**(default.__dict__ | chosen)), problems


def preview(adapter, target, *, policy, bonus_scope=BonusScope.NONE, bonus_amount=0, rejection_message="", study=None):
    """Every assignment's decision under the policy, with the ledger's state where a row exists (read only).
    Rejections carry ``rejection_message``, else ``study``'s (its provider_study), else DEFAULT_REJECTION."""
    rejection_message = rejection_message or (study.rejection_message if study else "") or DEFAULT_REJECTION
    records = adapter.assignments(target)
    participations = {
        p.work_key: p
        for p in Participation.objects.filter(study__protocol=target.protocol, study__object_id=target.object_id)
        .exclude(work_key="")
        .select_related("participant", "study")
    }
    rows = {
        (e.assignment_key, e.kind): e
        for e in LedgerEntry.objects.filter(protocol=target.protocol, object_id=target.object_id)
    }
    decisions = []
    for record in sorted(records, key=lambda r: (r.worker_id, r.hit_id, r.key)):
        participation = participations.get(record.key)
        bonus_kept = False
        decided = rows.get((record.key, LedgerEntry.Kind.DECISION))
        released = record.released or (
            participation is not None and participation.status == Participation.Status.RELEASED
        )
        if released and (decided is None or decided.state == LedgerEntry.State.PLANNED):
            continue  # returned, timed out or abandoned: nothing to decide
        bonus_row = rows.get((record.key, LedgerEntry.Kind.BONUS))
        if decided is not None and decided.state != LedgerEntry.State.PLANNED:
            action, reason, state = decided.action, decided.reason, decided.state
            bonus = bonus_row.amount if bonus_row is not None else None
            if bonus_row is not None and bonus_row.state == LedgerEntry.State.PLANNED:
                # its bonus is not sent: decided again, as any planned row, for the decision that was sent, if it
                # was never sent (it waits for the approval to be confirmed, or was held back over the limit and
                # planned again). One sent before keeps its amount: the platform knows it by its token and amount
                asked = bonus_for(action, record.qc, bonus_scope, bonus_amount)
                if not bonus_row.attempts:
                    bonus = asked
                else:
                    bonus_kept = asked != bonus_row.amount
        else:
            action, reason = decide(record, policy, rejection_message)
            bonus = bonus_for(action, record.qc, bonus_scope, bonus_amount)
            state = "review" if action == "review" else LedgerEntry.State.PLANNED
        decision = Decision(
            assignment_key=record.key,
            worker_id=record.worker_id,
            hit_id=record.hit_id,
            action=action,
            reason=reason,
            bonus=bonus,
            state=state,
            qc=record.qc,
            completed=record.completed,
            participation=participation,
            bonus_state=bonus_row.state if bonus_row is not None else "",
            bonus_kept=bonus_kept,
        )
        decisions.append(decision)
    return decisions


def run_decisions(adapter, target, chosen, *, study):
    """``preview`` with a payment run's settings (``chosen``, a ``RunSettings`` from ``run_settings``): the
    decisions every entry point shows and records."""
    return preview(
        adapter,
        target,
        policy=chosen.policy,
        bonus_scope=chosen.bonus_scope,
        bonus_amount=chosen.bonus_amount,
        study=study,
    )


def decisions_digest(decisions):
    """A short digest of what a person checks on the payments page (each assignment's decision, reason and bonus):
    the page records only when the decisions recomputed at the click still have it, so QC results or submissions
    that arrived meanwhile cannot change what is recorded unseen."""
    import hashlib
    import json

    seen = [[d.assignment_key, d.action, d.reason, None if d.bonus is None else f"{d.bonus:.2f}"] for d in decisions]
    return hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:32]


def totals(decisions, reward=Decimal("0")):
    approved = [d for d in decisions if d.action == "approve"]
    bonuses = sum((d.bonus for d in decisions if d.bonus), Decimal("0"))
    return {
        "assignments": len(decisions),
        "approve": len(approved),
        "reject": sum(d.action == "reject" for d in decisions),
        "review": sum(d.action == "review" for d in decisions),
        "bonus_count": sum(1 for d in decisions if d.bonus),
        "bonus_total": bonuses,
        "reward_total": reward * len(approved),
    }


def default_study(target):
    """The study that holds decisions about assignments no provider brought (imported judgments, site
    accounts): provider ``none``; created on first use."""
    study = target_studies(target).filter(provider=Provider.NONE).first()
    if study is None:
        study, _ = Study.objects.get_or_create(
            name=f"{target.protocol}-{target.name}-records"[:100],
            defaults={
                "provider": Provider.NONE,
                "protocol": target.protocol,
                "object_id": target.object_id,
                "target_name": target.name,
                "status": Study.Status.CLOSED,
                "title": f"Decisions about {target.name}",
            },
        )
    return study


@dataclass(frozen=True)
class Recorded:
    """What one recording did, in ledger rows: ``created`` new rows; ``updated`` planned rows brought up to date
    (QC, the policy or the bonus changed since they were recorded); ``removed`` planned rows no longer wanted
    (now for review, or no bonus); ``already`` rows the ledger held already as decided (planned alike, or sent on
    their way), left as they were; ``not_changed`` the assignments (keys) of rows this recording would have
    changed or removed but found sent meanwhile (a payment run claimed them after the preview): they went to the
    platform with their earlier decision and were not changed; ``kept`` the assignments whose planned bonus was
    sent once before (refused, then planned again) and keeps its amount where this recording asked for another
    or none (a platform knows a bonus by its token and amount). Neither is counted as "already recorded": the
    person asked for something else."""

    created: int = 0
    updated: int = 0
    removed: int = 0
    already: int = 0
    not_changed: tuple = ()
    kept: tuple = ()

    @property
    def written(self):
        return self.created + self.updated + self.removed

    def sentence(self):
        """What the person who recorded is told (the payments page, ``crowd_payments``); ``warning()`` besides."""
        if self.written == 0 and self.already and not self.not_changed and not self.kept:
            return (
                f"These decisions were already recorded ({self.already} ledger row(s)); nothing changed, "
                "nothing was recorded twice"
            )
        text = f"{self.written} ledger row(s) recorded as planned"
        return f"{text} ({self.already} already recorded, unchanged)" if self.already else text

    def warning(self):
        """The rows sent meanwhile with their earlier decision, and the bonuses sent once before that keep their
        amount, which this recording did not change as asked ("" if none)."""
        parts = []
        if self.not_changed:
            parts.append(
                f"{len(self.not_changed)} assignment(s) were sent to the platform meanwhile with their earlier "
                f"decision and were NOT changed as you asked ({_keys(self.not_changed)}); see their ledger rows"
            )
        if self.kept:
            parts.append(
                f"{len(self.kept)} bonus(es) were sent once before (refused, then planned again) and keep their "
                f"amount: NOT changed as you asked ({_keys(self.kept)}); a platform knows a bonus by its token and "
                "amount, so one is never sent again for another amount"
            )
        return "; ".join(parts)


def _keys(keys):
    return ", ".join(keys[:10]) + (", ..." if len(keys) > 10 else "")


# what makes a ledger row the decision it records (who recorded it aside)
_FOREIGN_KEYS = ("study", "participation")


def _unchanged(row, fields):
    for name, value in fields.items():
        if name == "created_by":
            continue
        if name in _FOREIGN_KEYS:
            if getattr(row, f"{name}_id") != (value.pk if value is not None else None):
                return False
        elif getattr(row, name) != value:
            return False
    return True


def _lock_ledger(target):
    """Lock the target's LedgerLock row (created on its first recording) until the transaction ends."""
    LedgerLock.objects.select_for_update().get_or_create(protocol=target.protocol, object_id=target.object_id)


class DecisionsChanged(Exception):
    """The decisions computed under the ledger's lock are not the ones the person saw (``seen``): nothing recorded.
    ``decisions``: the current ones, to show again."""

    def __init__(self, decisions):
        super().__init__("the decisions changed since they were shown")
        self.decisions = decisions


def decide_and_record(adapter, target, chosen, *, study, user=None, seen=None):
    """The one recording of a payment run's decisions (the payments page, the API, ``crowd_payments``): takes the
    target's LedgerLock first, then computes the decisions (``preview``, with ``chosen``, a ``RunSettings``) and
    checks them against ``seen`` (the digest the page showed; None: no check) under it, then records them.
    Returns ``(decisions, Recorded)``; raises ``DecisionsChanged`` (nothing recorded) when ``seen`` no longer
    matches, and ``MixedSettings`` (nothing recorded) when the target's participants came through studies that
    pay differently (``mixed_settings``). Computed before the lock, a recording that waited for another could
    overwrite that newer recording's rows with decisions from older QC results."""
    with transaction.atomic():
        _lock_ledger(target)
        if conflict := mixed_settings(target):
            raise MixedSettings(conflict)
        decisions = run_decisions(adapter, target, chosen, study=study)
        if seen is not None and decisions_digest(decisions) != seen:
            raise DecisionsChanged(decisions)
        return decisions, _record_locked(target, decisions, policy=chosen.policy, user=user)


def record(target, decisions, *, policy, user=None, currency=None):
    """Write the decisions as planned ledger rows (one per assignment and kind); returns what it did
    (``Recorded``). Rows already sent are never touched; planned rows are brought up to date (or removed when the
    decision is now 'review'), and left alone, counted as already recorded, when nothing about them changed.

    Every entry point records through here (the payments page, the API, ``crowd_payments``), and recordings of
    one target run one after the other: each holds the target's LedgerLock row for its transaction and reads
    the ledger under it, so a double click, two staff members, a retried call or the command at the same moment
    store every row once, and the later one is answered with the rows the earlier one wrote. Without the lock
    both read the ledger before either wrote, and the second met the ledger's unique constraint: an
    IntegrityError, a 500 on the page. Payment runs do not take the lock (they hold the study's lease), so rows
    are changed or removed only while still planned (conditional statements): a row a run claims meanwhile is
    on its way and stays as it is."""
    with transaction.atomic():
        _lock_ledger(target)
        return _record_locked(target, decisions, policy=policy, user=user, currency=currency)


def _record_locked(target, decisions, *, policy, user=None, currency=None):
    """``record``, in the transaction that holds the target's LedgerLock (``record``, ``decide_and_record``)."""
    counts = dict(created=0, updated=0, removed=0, already=0)
    not_changed = []  # assignments with a row this recording would have changed, found sent meanwhile
    kept = []  # assignments whose bonus, sent once before, keeps its amount though this recording asked otherwise

    def outcome(d, done):
        if done in ("not_changed", "kept"):
            listed = not_changed if done == "not_changed" else kept
            if d.assignment_key not in listed:
                listed.append(d.assignment_key)
        else:
            counts[done] += 1

    where = {"protocol": target.protocol, "object_id": target.object_id}
    rows = _read_ledger(where)
    fallback = None
    for d in decisions:
        decided = rows.get((d.assignment_key, LedgerEntry.Kind.DECISION))
        bonus = rows.get((d.assignment_key, LedgerEntry.Kind.BONUS))
        if d.state not in (LedgerEntry.State.PLANNED, "review"):  # sent or settled when previewed: frozen
            counts["already"] += decided is not None
            if bonus is None:  # none is created for a decision already sent
                continue
            if bonus.attempts and d.bonus != bonus.amount:
                # sent since the preview, which decided it again: on its way as it was (never sent again with
                # another amount)
                outcome(d, "not_changed")
                continue
            if d.bonus_kept:  # sent once before, planned again: keeps its amount (``preview``)
                outcome(d, "kept" if bonus.state == LedgerEntry.State.PLANNED else "not_changed")
                continue
            # a bonus never sent is brought up to date as any planned row (``preview`` decided it again); one
            # claimed meanwhile is on its way and stays as it is ("not_changed"), one unchanged is "already"
            paid = {"amount": d.bonus, **_basis(d, policy), "created_by": user}
            outcome(d, _update_planned(bonus, paid) if d.bonus else _delete_planned(bonus))
            continue
        key = {**where, "assignment_key": d.assignment_key}
        if d.action == "review":
            for row in (r for r in (decided, bonus) if r is not None):
                outcome(d, _delete_planned(row))
            continue
        study = d.participation.study if d.participation is not None else None
        if study is None:
            fallback = fallback or default_study(target)
            study = fallback
        common = {
            "study": study,
            "participation": d.participation,
            "worker_id": d.worker_id,
            "hit_id": d.hit_id,
            "submission_id": d.participation.external_submission_id if d.participation else "",
            **_basis(d, policy),
            "created_by": user,
        }
        decision = {
            **common,
            "action": d.action,
            "reason": d.reason,
            "rejection_category": study.rejection_category if d.action == "reject" else "",
        }
        if decided is None:
            LedgerEntry.objects.create(
                **key, **decision, kind=LedgerEntry.Kind.DECISION, request_token=uuid.uuid4().hex
            )
            counts["created"] += 1
        else:
            outcome(d, _update_planned(decided, decision))
        if d.bonus:
            paid = {**common, "amount": d.bonus}
            if bonus is None:
                LedgerEntry.objects.create(
                    **key,
                    **paid,
                    kind=LedgerEntry.Kind.BONUS,
                    action="bonus",
                    currency=currency or study.currency,
                    reason="Bonus for your work",
                    request_token=uuid.uuid4().hex,
                )
                counts["created"] += 1
            else:
                outcome(d, _update_planned(bonus, paid))
        elif bonus is not None:
            outcome(d, _delete_planned(bonus))
    return Recorded(**counts, not_changed=tuple(not_changed), kept=tuple(kept))


def _basis(d, policy):
    """What a ledger row records of the decision ``d`` came from: the policy and the QC result."""
    qc = d.qc
    return {
        "policy": policy,
        "qc_status": qc.status,
        "qc_test": qc.test or "",
        "qc_p_value": qc.p_value,
        "qc_n_pairs": qc.n_pairs,
        "qc_threshold": qc.threshold,
    }


def _read_ledger(where):
    """The target's ledger rows by (assignment, kind), its planned rows locked first in one statement, in
    primary-key order: a payment run claims rows in that order too (``ledger.claim``), so the two wait for each
    other instead of deadlocking on PostgreSQL (rows updated one by one, each locked as it came, met a claim
    that locked a batch in another order). A row a run claimed before the lock is not planned any more when
    read here; one planned here stays planned until the recording ends."""
    planned = LedgerEntry.objects.select_for_update().filter(**where, state=LedgerEntry.State.PLANNED).order_by("pk")
    locked = {(e.assignment_key, e.kind): e for e in planned}
    # every row (one put back to planned after the lock statement is read too, not locked: its updates stay
    # conditional on its state), the locked ones as locked
    return {(e.assignment_key, e.kind): e for e in LedgerEntry.objects.filter(**where)} | locked


# what a row sends to the platform: a row sent meanwhile that differs in one of these was not changed as asked
_SENT_FIELDS = ("action", "amount", "reason", "rejection_category")


def _update_planned(row, fields):
    """Bring a planned row up to date: "updated"; "already" when nothing about the decision changed (whatever its
    state); "not_changed" when it differs but is not planned any more (a payment run claimed it after the
    preview: it is on its way with its earlier decision, and stays as it is)."""
    if _unchanged(row, fields):
        return "already"
    if row.state != LedgerEntry.State.PLANNED:
        # what went to the platform: a QC detail recorded differently is no different payment
        sent = {name: value for name, value in fields.items() if name in _SENT_FIELDS}
        return "already" if _unchanged(row, sent) else "not_changed"
    updated = LedgerEntry.objects.filter(pk=row.pk, state=LedgerEntry.State.PLANNED).update(**fields)
    return "updated" if updated else "not_changed"


def _delete_planned(row):
    """Remove a row no longer wanted only while it is still planned ("removed"): one a payment run claimed
    meanwhile was sent to the platform (deleted by its key alone, a later recording would plan, and pay, it
    again), so it stays, and the person is told ("not_changed")."""
    if row.state != LedgerEntry.State.PLANNED:
        return "not_changed"
    deleted, _ = LedgerEntry.objects.filter(pk=row.pk, state=LedgerEntry.State.PLANNED).delete()
    return "removed" if deleted else "not_changed"


def document(target, decisions, policy):
    """The ``crowd_payments --format json`` contract: ``{"campaign", "policy", "decisions": [...]}``, one decision
    per assignment with ``worker_id, hit_id, action, reason, bonus, state, qc {test, p_value, n_pairs, threshold,
    status}``."""
    return {"campaign": target.name, "policy": policy, "decisions": [d.as_dict() for d in decisions]}
