"""Sending a study's recorded payments (issue #11, money): ``apply_study`` reconciles what a crash or an error left
``sent``, then sends the planned decisions and bonuses through the study's provider, one run per study at a time
(its payment lease); ``plan_failed_again`` and ``resolve_dispatch`` are a person's answers to rows refused or in
doubt; ``summary`` counts the ledger by state. Deciding and recording the rows is ``payments``.
"""

import uuid

from django.db import transaction

from .models import Dispatch, LedgerEntry, Participation, Study
from .payments import max_bonus

RUN_PASSES = 3  # passes of one payment run: the second sends what recordings changed during the first


def _as_read(entry):
    return entry.pk, entry.action, entry.amount


def apply_study(study, provider=None):
    """Send a study's planned rows, after reconciling rows a crash or an error left ``sent``. Safe to run twice
    or concurrently: one run at a time holds the study's payment lease (a conditional UPDATE, no transaction
    held across platform calls, so a crash loses no ledger state); a run that finds it held sends nothing and
    answers ``busy`` (the task retries later). Without the lease, a second run would reconcile the first's rows
    while its requests are still queued at the platform, find nothing changed yet and send them again.
    A recording during the run (a decision changed, a row added) is usually sent by the same run: it passes
    over the planned rows again (at most ``RUN_PASSES`` times) until a pass finds none it has not tried as they
    are. One recorded during the last pass, or changed back to what the run had tried, stays planned: the run
    counts it in ``pending``, and the payment task sends it a few seconds later (``tasks.apply_payments``). A run
    that finds its lease lost sends nothing more.
    Returns the counts by state, the dispatches in doubt and ``pending``."""
    from .providers import provider_for

    token = take_lease(study)
    if token is None:
        out = summary(study)
        out["busy"] = True
        out["unsettled"] = max(out["unsettled"], 1)  # the task tries again later
        out["retry_in"] = lease_remaining(study)
        return out
    try:
        provider = provider or provider_for(study)
        rows = LedgerEntry.objects.filter(study=study).select_related("participation__participant")
        sent = list(rows.filter(state=LedgerEntry.State.SENT).order_by("pk"))
        provider.reconcile(
            [e for e in sent if e.kind == LedgerEntry.Kind.DECISION],
            [e for e in sent if e.kind == LedgerEntry.Kind.BONUS],
        )
        tried = set()  # the rows each pass read and sent, as read (a row still planned as read is not tried again)
        # each send is followed by renewing the lease; a run that finds it lost (a send that outlasted it, and
        # another run took it over) sends nothing more: that run sends the rest
        for _ in range(RUN_PASSES if renew_lease(study, token) else 0):
            decisions = [e for e in _planned_decisions(rows) if _as_read(e) not in tried]
            if decisions:
                provider.send(decisions, [])
            if not renew_lease(study, token):
                break
            hold_back_large_bonuses(study)
            bonuses = [e for e in _payable_bonuses(rows) if _as_read(e) not in tried]
            if bonuses:
                provider.send([], bonuses)
            if not renew_lease(study, token) or not (decisions or bonuses):
                break
            # another pass: rows a recording planned or changed while this one sent (its claim left a changed
            # row planned: never sent as what it no longer is) are sent now, as the ledger holds them
            tried.update(_as_read(e) for e in decisions + bonuses)
        replace_rejected(study)
    finally:
        release_lease(study, token)
    out = summary(study)
    out["busy"] = False
    # what a send would send now: recorded during the last pass, or changed back to what this run tried (the
    # task sends it in a moment, tasks.apply_payments; nothing else would until a person sends again)
    out["pending"] = len(_planned_decisions(rows)) + len(_payable_bonuses(rows))
    return out


def _planned_decisions(rows):
    """The planned decision rows of ``rows`` (a study's ledger queryset), in primary-key order (claims lock in
    that order, ``ledger.claim``)."""
    return list(rows.filter(state=LedgerEntry.State.PLANNED, kind=LedgerEntry.Kind.DECISION).order_by("pk"))


def _payable_bonuses(rows):
    """The planned bonus rows of ``rows`` a run may send: their approval is confirmed on the platform and they
    are at most ``max_bonus()`` (larger ones are held back, ``hold_back_large_bonuses``), in primary-key order."""
    approved = set(
        rows.filter(
            kind=LedgerEntry.Kind.DECISION, action=LedgerEntry.Action.APPROVE, state=LedgerEntry.State.CONFIRMED
        ).values_list("assignment_key", flat=True)
    )
    limit = max_bonus()
    return [
        e
        for e in rows.filter(state=LedgerEntry.State.PLANNED, kind=LedgerEntry.Kind.BONUS).order_by("pk")
        if e.assignment_key in approved and e.amount <= limit
    ]


def hold_back_large_bonuses(study):
    """Fail, never send, the study's planned bonus rows over ``max_bonus()``: rows planned before the limit
    existed (or while it was larger); every bonus recorded since is checked when it is entered. Conditional
    UPDATEs (planned and over the limit when they run), one message for rows never sent (record a smaller bonus)
    and one for rows sent once before, which keep their amount (``payments.record``). Returns how many were held back."""
    from django.utils import timezone

    limit = max_bonus()
    over = LedgerEntry.objects.filter(
        study=study, kind=LedgerEntry.Kind.BONUS, state=LedgerEntry.State.PLANNED, amount__gt=limit
    )
    held = f"held back, not sent: over the largest bonus allowed per HIT ({limit:.2f}, CAPTIONEVAL_MAX_BONUS); "
    fields = {"state": LedgerEntry.State.FAILED, "settled_at": timezone.now()}
    never_sent = over.filter(attempts=0).update(
        **fields,
        error=held + "plan the failed rows again, then record the decisions with a bonus at most that large",
    )
    sent_before = over.filter(attempts__gt=0).update(
        **fields,
        error=held + "it was sent once before, so it keeps its amount (a platform knows it by its token and "
        "amount): raise the limit and plan the failed rows again to pay it, or leave it failed and pay what is "
        "right on the platform",
    )
    return never_sent + sent_before


def lease_remaining(study):
    """Whole seconds until the study's payment lease ends (at least 1): when a run that found it held should try
    again (a lease left by a crashed run is then taken over)."""
    import math

    from django.utils import timezone

    until = Study.objects.filter(pk=study.pk).values_list("payments_lease_until", flat=True).first()
    if until is None:
        return 1
    return max(1, math.ceil((until - timezone.now()).total_seconds()))


def _lease_seconds():
    from . import config

    return int(config.setting("CROWD_PAYMENTS_LEASE_SECONDS", 900) or 900)


def take_lease(study, now=None):
    """The study's payment lease for this run (a token), or None while another run holds it. A lease left by a
    run that died expires after ``CROWD_PAYMENTS_LEASE_SECONDS``; the next run then reconciles what it left."""
    from django.db.models import Q
    from django.utils import timezone

    now = now or timezone.now()
    token = uuid.uuid4().hex
    taken = (
        Study.objects.filter(pk=study.pk)
        .filter(Q(payments_lease_until__isnull=True) | Q(payments_lease_until__lte=now))
        .update(payments_lease_until=now + timezone.timedelta(seconds=_lease_seconds()), payments_lease_token=token)
    )
    return token if taken else None


def renew_lease(study, token):
    """Extend this run's lease; False when the run no longer holds it (it ran out and another run took it)."""
    from django.utils import timezone

    return bool(
        Study.objects.filter(pk=study.pk, payments_lease_token=token).update(
            payments_lease_until=timezone.now() + timezone.timedelta(seconds=_lease_seconds())
        )
    )


def release_lease(study, token):
    Study.objects.filter(pk=study.pk, payments_lease_token=token).update(
        payments_lease_until=None, payments_lease_token=""
    )


def replace_rejected(study):
    """Rejected work no longer counts for its HIT: the participation is released and the protocol gives the HIT's
    slot back (its judgments stay for the record), so the next participant who comes takes it and every HIT ends
    up done by the planned number of accepted workers. The study's local places are freed by the release; on
    Prolific, returned and timed-out submissions reopen their place by themselves (Prolific's help pages) — if a
    rejected one does not, add places (``crowd_study places``). Safe to run twice."""
    from . import admission

    if not study.replace_rejected:
        return 0
    rejected = Participation.objects.filter(
        study=study,
        status=Participation.Status.COMPLETED,
        ledger__kind=LedgerEntry.Kind.DECISION,
        ledger__action=LedgerEntry.Action.REJECT,
        ledger__state=LedgerEntry.State.CONFIRMED,
    ).select_related("study", "participant")
    return sum(admission.release(p, "rejected", completed_too=True) for p in rejected)


def plan_failed_again(study, provider=None):
    """Put the study's failed rows back to planned (``crowd_ledger retry``, the study page, the API) once the
    cause of their refusal is fixed (the rejection message, the platform's token, the account's funds, a batch
    refused for one bad row): nothing else ever moves a row out of ``failed``. Each row is looked up on the
    platform first, as a row a crash left sent is: a refusal may hide a call that went through (MTurk refuses a
    bonus token it granted already, and the lookup that tells may have failed), so a row the platform shows done
    is confirmed instead, and one it cannot be asked about stays failed (a row never sent, held back over the
    bonus limit, is planned again without asking). The next payment run sends the planned ones (a bonus still
    only after its approval is confirmed); recording the decisions again first brings them up to date (a bonus
    sent before keeps its amount, ``payments.record``). Returns the counts ``{"planned", "confirmed", "unchecked"}``."""
    from django.core.exceptions import ImproperlyConfigured

    from . import ledger
    from .providers import provider_for

    provider = provider or provider_for(study)
    if provider.make_client is not None:
        try:
            _ = provider.client  # made now, so a missing API token changes nothing (it was a 500)
        except ImproperlyConfigured as exc:
            raise ValueError(f"{study.get_provider_display()} cannot be asked ({exc}); nothing changed") from None
    counts = {"planned": 0, "confirmed": 0, "unchecked": 0}
    for row in LedgerEntry.objects.filter(study=study, state=LedgerEntry.State.FAILED).order_by("pk"):
        if not row.attempts:  # never claimed, never sent (held back over the limit): nothing to ask the platform
            counts["planned"] += ledger.plan_again([row])
            continue
        done = provider.already_done(row)
        if done is None:
            counts["unchecked"] += 1
        elif done:
            counts["confirmed"] += ledger.confirm_failed([row], "found done on the platform when sent again")
        else:
            counts["planned"] += ledger.plan_again([row])
    return counts


def summary(study):
    counts = {state: 0 for state in LedgerEntry.State.values}
    for state in LedgerEntry.objects.filter(study=study).values_list("state", flat=True):
        counts[state] += 1
    return {
        "study": study.name,
        "states": counts,
        "in_doubt": list(
            Dispatch.objects.filter(study=study, state=Dispatch.State.IN_DOUBT).values_list("pk", flat=True)
        ),
        "unsettled": counts[LedgerEntry.State.SENT],
    }


def resolve_dispatch(dispatch, *, paid, user=None, provider=None):
    """A person checked an IN_DOUBT bonus dispatch on the platform: ``paid`` confirms its rows; not paid puts
    them back to planned (a new dispatch will pay them). Raises ValueError, changing nothing, for a dispatch not
    in doubt, and for "not paid" while the platform now shows any of its bonuses paid, or cannot be asked:
    Prolific pays a batch in the minutes after the pay call, so a person who looked too early would otherwise
    have it paid twice. The platform is asked before the dispatch is locked (its retries can take a minute)."""
    current = Dispatch.objects.get(pk=dispatch.pk)
    if current.state != Dispatch.State.IN_DOUBT:
        raise ValueError(f"dispatch {dispatch.pk} is {current.state}, not in doubt")
    if not paid:
        _refuse_if_shown_paid(dispatch, provider)
    with transaction.atomic():
        dispatch = Dispatch.objects.select_for_update().get(pk=dispatch.pk)
        if dispatch.state != Dispatch.State.IN_DOUBT:  # resolved by someone else meanwhile
            raise ValueError(f"dispatch {dispatch.pk} is {dispatch.state}, not in doubt")
        entries = LedgerEntry.objects.filter(dispatch=dispatch, state=LedgerEntry.State.SENT)
        if paid:
            from . import ledger

            ledger.confirm(list(entries), "confirmed by a person after checking the platform")
            dispatch.state = Dispatch.State.DONE
        else:
            entries.update(state=LedgerEntry.State.PLANNED, dispatch=None)
            dispatch.state = Dispatch.State.FAILED
        dispatch.error = f"resolved by {getattr(user, 'username', 'a person')}: {'paid' if paid else 'not paid'}"
        dispatch.save(update_fields=["state", "error", "updated_at"])
    return dispatch


def _refuse_if_shown_paid(dispatch, provider=None):
    """ValueError when the platform shows any bonus of the dispatch paid, or cannot be asked."""
    from django.core.exceptions import ImproperlyConfigured

    from .providers import provider_for
    from .providers.prolific_client import ProlificError, TransientError

    study = Study.objects.get(pk=dispatch.study_id)
    platform = study.get_provider_display()
    try:
        shown = (provider or provider_for(study)).shows_any_paid(dispatch)
    except (ProlificError, TransientError, ImproperlyConfigured) as exc:  # (no API token: ImproperlyConfigured)
        raise ValueError(
            f"{platform} could not be asked again whether dispatch {dispatch.pk} was paid ({exc}); nothing "
            "changed: try again in a few minutes"
        ) from None
    if shown:
        raise ValueError(
            f"{platform} now shows bonuses of dispatch {dispatch.pk} (bulk bonus payment "
            f"{dispatch.external_id or '?'}) paid: it was paid, so resolve it as paid; nothing changed"
        )
