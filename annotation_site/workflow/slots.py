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
from django.db.models import Exists, F, Func, OuterRef, Q, Subquery

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


def hand_out(*, lock_member, refusal, current, free, take, create, after_lock=None, full=None):
    """The annotator's open assignment, else ``create(pk)`` for a newly claimed unit; None when nothing is
    left (or ``full()`` says they have all they may take). ``lock_member()``: locks their membership row and
    says whether there is one (PermissionDenied(``refusal``) when not), run first; ``current()``: their oldest
    open assignment in this unit or None; ``free`` and ``take`` as for ``claim``. Both callables run inside the
    transaction (the protocols pass queries compiled once per connection)."""
    with transaction.atomic():
        if not lock_member():
            raise PermissionDenied(refusal)
        found = current()
        if found is not None:
            return found
        if full is not None and full():
            return None
        claimed = claim(free, take, after_lock=after_lock)
        if claimed is not None:
            return create(claimed)
    return None


def count_of(queryset):
    """A subquery counting ``queryset``'s rows (one row, no grouping)."""
    return Subquery(queryset.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n"))


def position_queryset(pk, *, assignments, units, scope, unit, capacity):
    """The assignment ``pk`` annotated for ``position_of`` in one query: ``number``, its place among its
    annotator's assignments in its ``scope`` (project, task), oldest first; ``mine``, how many they have there;
    ``assignable``, the scope's ``units`` with room (``assigned`` below the scope's ``capacity`` field) that they
    have no assignment for. ``unit``: the assignment's field naming its unit."""
    mine = assignments.objects.filter(
        **{f"{scope}_id": OuterRef(f"{scope}_id"), "annotator_id": OuterRef("annotator_id")}
    )
    free = units.objects.filter(
        **{f"{scope}_id": OuterRef(f"{scope}_id"), "assigned__lt": OuterRef(f"{scope}__{capacity}")}
    ).exclude(
        Exists(
            assignments.objects.filter(
                **{f"{unit}_id": OuterRef("pk"), "annotator_id": OuterRef(OuterRef("annotator_id"))}
            )
        )
    )
    earlier = Q(created_at__lt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), id__lte=OuterRef("id"))
    return (
        assignments.objects.filter(pk=pk)
        .annotate(number=count_of(mine.filter(earlier)), mine=count_of(mine), assignable=count_of(free))
        .only("pk")
        .order_by()
    )


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


class ScopeQueries:
    """The reads of handing out and showing a protocol's assignments, compiled once per database connection
    (``annotation_site.prepared_queries``) for one protocol: ``assignments`` of ``units`` in a ``scope`` (its
    field on both, e.g. project / task), ``members`` of the scope, ``unit`` the assignment's field naming its
    unit, ``capacity`` the scope's field of how many assignments a unit takes. ``sentinels``: five distinct
    negative ids marking the values in the compiled SQL (lock: scope, annotator; open: scope, annotator;
    position: pk)."""

    def __init__(self, *, assignments, members, units, scope, unit, capacity, sentinels):
        lock_scope, lock_annotator, open_scope, open_annotator, position_pk = sentinels
        self._lock = Prepared(
            lambda scope_id, annotator_id: (
                members.objects.select_for_update(of=("self",))
                .filter(**{f"{scope}_id": scope_id, "annotator_id": annotator_id})
                .order_by("pk")[:1]
            ),
            scope_id=lock_scope,
            annotator_id=lock_annotator,
        )
        self._open = Prepared(
            lambda scope_id, annotator_id: assignments.objects.filter(
                **{f"{scope}_id": scope_id, "annotator_id": annotator_id}, status=AssignmentStatus.OPEN
            ).order_by("created_at", "id")[:1],
            scope_id=open_scope,
            annotator_id=open_annotator,
        )
        self._position = Prepared(
            lambda pk: position_queryset(
                pk, assignments=assignments, units=units, scope=scope, unit=unit, capacity=capacity
            ),
            pk=position_pk,
        )

    def lock_member(self, scope_id, annotator_id):
        """Lock the annotator's membership row (inside a transaction); whether there is one."""
        return bool(self._lock.run(scope_id=scope_id, annotator_id=annotator_id))

    def open_assignment(self, scope_id, annotator_id):
        """The annotator's oldest open assignment in the scope, or None."""
        found = self._open.run(scope_id=scope_id, annotator_id=annotator_id)
        return found[0] if found else None

    def position(self, pk):
        """``(number, mine + assignable)`` of assignment ``pk`` (``position_queryset``)."""
        [found] = self._position.run(pk=pk)
        return found.number, found.mine + found.assignable
