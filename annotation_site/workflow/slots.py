"""Claiming one slot of a work unit that only N annotators may take (a factuality video, a task item).

The caller has already serialised the annotator's own requests (by locking their membership row) and passes
``free``: a ``values_list("pk", flat=True)`` queryset of the units still open to this annotator, in the order
they should go out, and ``take(pk)``: a conditional ``UPDATE ... SET assigned = assigned + 1 WHERE pk = ... AND
assigned < cap`` that returns whether it updated a row.

On PostgreSQL a unit another request is taking at this instant is skipped (``select_for_update(skip_locked=
True)``), so annotators arriving together take different units without queueing; only when every free unit is
locked does a request wait, for the first one, and then look again. The conditional UPDATE on the locked row
means the last slot can go only once, whatever the database; on SQLite the IMMEDIATE transactions of the
settings serialise writers, which gives the same guarantee. Must run inside ``transaction.atomic()``.

``hand_out`` is the whole step every protocol runs (lock the membership, return the open assignment, else
claim a slot and create the assignment); ``position`` and ``release`` are the annotator's place among their
assignments and giving an unsubmitted one back.
"""

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F

from annotation_site.prepared_queries import Prepared

from .statuses import AssignmentStatus


def claim(free, take, *, after_lock=None, rounds=50):
    """The pk of the unit whose slot was taken, or None when no unit is left. Each round either claims a slot
    or sees one fewer free unit, so ``rounds`` only bounds pathological contention."""
    for _ in range(rounds):
        candidate = free.select_for_update(skip_locked=True, of=("self",)).first()
        if candidate is None:
            # Every free unit is being handed to someone else right now (or none is left): wait for the first
            # one's lock, then look again (its last slot may be gone by then).
            candidate = free.first()
            if candidate is None:
                return None
            if free.filter(pk=candidate).select_for_update(of=("self",)).first() is None:
                continue
        if after_lock is not None:
            after_lock()
        if take(candidate):
            return candidate
    return None


def first_open(assignments):
    """The oldest open assignment of ``assignments`` (one annotator's in one unit), or None."""
    return assignments.filter(status=AssignmentStatus.OPEN).order_by("created_at", "id").first()


def hand_out(*, members, refusal, assignments, free, take, create, after_lock=None, full=None):
    """The annotator's open assignment, else ``create(pk)`` for a newly claimed unit; None when nothing is
    left (or ``full()`` says they have all they may take). ``members``: their membership row's queryset,
    locked first (PermissionDenied(``refusal``) when there is none); ``assignments``: theirs in this unit;
    ``free`` and ``take`` as for ``claim``."""
    with transaction.atomic():
        if members.select_for_update(of=("self",)).order_by("pk").first() is None:
            raise PermissionDenied(refusal)
        current = first_open(assignments)
        if current is not None:
            return current
        if full is not None and full():
            return None
        claimed = claim(free, take, after_lock=after_lock)
        if claimed is not None:
            return create(claimed)
    return None


def position(assignments, assignment, assignable):
    """``(number, total)``: ``assignment``'s place among ``assignments`` (the annotator's in its unit, oldest
    first) and their count plus ``assignable`` (what they could still be handed)."""
    mine = list(assignments.order_by("created_at", "id").values_list("pk", flat=True))
    number = mine.index(assignment.pk) + 1 if assignment.pk in mine else len(mine)
    return number, len(mine) + assignable


def release(assignments, units):
    """Delete the assignment of ``assignments`` (a one-row queryset) when it is open and has no submission,
    and give its slot back in ``units`` (its unit's one-row queryset); whether it did."""
    with transaction.atomic():
        if assignments.filter(status=AssignmentStatus.OPEN, submissions__isnull=True).delete()[0]:
            units.filter(assigned__gt=0).update(assigned=F("assigned") - 1)
            return True
    return False


class AssignmentLookup:
    """``lookup(annotator, pk)``: the assignment ``pk`` of this annotator with ``related`` (others' are
    invisible: None; so is every assignment for no annotator). One query, compiled once per database connection
    (``annotation_site.prepared_queries``: every submission reads it); ``sentinels``: the two distinct negative
    ids that mark pk and annotator in the compiled SQL."""

    def __init__(self, model, *related, sentinels):
        self.query = Prepared(
            lambda pk, annotator_id: (
                model.objects.select_related(*related).filter(pk=pk, annotator_id=annotator_id).order_by()[:1]
            ),
            pk=sentinels[0],
            annotator_id=sentinels[1],
        )

    def __call__(self, annotator, pk):
        if annotator is None:
            return None
        found = self.query.run(pk=int(pk), annotator_id=annotator.pk)
        return found[0] if found else None
