"""Moving ledger rows between states. Every move is a conditional UPDATE on the row's current state, so two
runs working at once can never both send the same row: only one claims it (planned -> sent)."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .models import LedgerEntry

State = LedgerEntry.State


def checkpoint(name):
    """Called between two platform calls of the payment engine (tests replace it to 'crash' the run there)."""


def claim(entries, action=None):
    """planned -> sent for each row (attempts + 1); returns the rows this run claimed, read again under their
    locks: the caller acts on these (their action, amount, reason as they are now), never on ``entries``, which
    were read before and may have been changed since by a recording (``payments.record`` updates planned rows).
    ``action``: claim only rows whose action is still that one; a row a recording changed to another action
    since ``entries`` were read stays planned (it is never sent as what it no longer is; the run's next pass
    sends it as it is, ``sending.apply_study``).

    The rows are locked in primary-key order, as ``payments.record`` locks the target's planned rows, so a
    recording and a payment run wait for each other instead of deadlocking on PostgreSQL."""
    ids = [e.pk for e in entries]
    wanted = LedgerEntry.objects.filter(pk__in=ids, state=State.PLANNED)
    if action is not None:
        wanted = wanted.filter(action=action)
    with transaction.atomic():
        claimed = list(wanted.select_for_update().order_by("pk").values_list("pk", flat=True))
        LedgerEntry.objects.filter(pk__in=claimed).update(
            state=State.SENT, sent_at=timezone.now(), attempts=F("attempts") + 1, error=""
        )
        return list(LedgerEntry.objects.filter(pk__in=claimed).order_by("pk"))


def confirm(entries, note=""):
    ids = [e.pk for e in entries]
    fields = {"state": State.CONFIRMED, "settled_at": timezone.now()}
    if note:
        fields["error"] = note
    return LedgerEntry.objects.filter(pk__in=ids, state=State.SENT).update(**fields)


def fail(entries, error):
    ids = [e.pk for e in entries]
    return LedgerEntry.objects.filter(pk__in=ids, state=State.SENT).update(
        state=State.FAILED, settled_at=timezone.now(), error=str(error)[:2000]
    )


def note(entries, error):
    """Record a transient problem on rows that stay sent (the next run reconciles them)."""
    LedgerEntry.objects.filter(pk__in=[e.pk for e in entries]).update(error=str(error)[:2000])


def unsend(entries):
    """sent -> planned: the platform shows the request had no effect, so it may be sent again."""
    return LedgerEntry.objects.filter(pk__in=[e.pk for e in entries], state=State.SENT).update(state=State.PLANNED)


def plan_again(entries):
    """failed -> planned: a person sends refused rows again once the cause is fixed (``sending.plan_failed_again``
    checks the platform first). The row keeps its idempotency token (MTurk still recognises a bonus it granted
    under it) and leaves its dispatch. Returns how many moved."""
    return LedgerEntry.objects.filter(pk__in=[e.pk for e in entries], state=State.FAILED).update(
        state=State.PLANNED, dispatch=None, settled_at=None
    )


def confirm_failed(entries, note):
    """failed -> confirmed: the platform shows done what a run had recorded as refused."""
    return LedgerEntry.objects.filter(pk__in=[e.pk for e in entries], state=State.FAILED).update(
        state=State.CONFIRMED, settled_at=timezone.now(), error=note
    )
