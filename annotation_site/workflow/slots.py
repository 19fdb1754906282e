"""Claiming one slot of a work unit that only N annotators may take (a factuality video, a task item).

The caller has already serialised the annotator's own requests (by locking their membership row) and passes
``free``: the units still open to this annotator, in the order they should go out (``FreeUnits``: ``pick()``
the first one nobody has locked, locking it; ``first()`` without a lock; ``lock(pk)`` that one if it is still
free), and ``take(pk)``: a conditional ``UPDATE ... SET assigned = assigned + 1 WHERE pk = ... AND assigned <
cap`` that returns whether it updated a row. ``ScopeQueries.free`` / ``take`` are both, compiled once per
connection.

On PostgreSQL a unit another request is taking at this instant is skipped (``select_for_update(skip_locked=
True)``), so annotators arriving together take different units without queueing; only when every free unit is
locked does a request wait, for the first one, and then look again. The conditional UPDATE on the locked row
means the last slot can go only once, whatever the database; on SQLite the IMMEDIATE transactions of the
settings serialise writers, which gives the same guarantee. Must run inside ``transaction.atomic()``.

``hand_out`` is the whole step every protocol runs (lock the membership, return the open assignment, else
claim a slot and create the assignment); ``position`` and ``release`` are the annotator's place among their
assignments and giving an unsubmitted one back.
"""

from typing import NamedTuple

from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Exists, F, Func, IntegerField, OuterRef, Q, Subquery

from annotation_site.prepared_queries import Prepared

from .statuses import AssignmentStatus

CAPACITY_SENTINEL = 32_109  # marks a unit's capacity in the compiled free-unit queries

# The condition of the units' partial index of those with room, by their copy of the scope's capacity
# (annotation_site/workflow/capacity.py): in every read of free units, next to the comparison with the scope's
# own value that decides, so that PostgreSQL reads that index in hand-out order instead of every unit.
WITH_ROOM = Q(assigned__lt=F("capacity"))
IN_ORDER = ("position", "id")  # the hand-out's order, that index's

# "Video 7 of N" counts the units still open to the annotator up to this many: beyond it the page says "N+"
# (the count would read every open unit of the scope on every page).
ASSIGNABLE_COUNTED = 100


def more_than_counted(count):
    """A count of open units read up to ``ASSIGNABLE_COUNTED`` reached it: there may be more ("N+")."""
    return count >= ASSIGNABLE_COUNTED


def claim(free, take, *, after_lock=None, rounds=50):
    """The pk of the unit whose slot was taken, or None when no unit is left. Each round either claims a slot
    or sees one fewer free unit, so ``rounds`` only bounds pathological contention."""
    for _ in range(rounds):
        candidate = free.pick()
        if candidate is None:
            # Every free unit is being handed to someone else right now (or none is left): wait for the first
            # one's lock, then look again (its last slot may be gone by then).
            candidate = free.first()
            if candidate is None:
                return None
            if not free.lock(candidate):
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


def count_at_most(queryset, most):
    """A subquery counting ``queryset``'s rows up to ``most``: the count of a LIMIT, so the read stops there.
    Order ``queryset`` as an index gives its rows (without an order PostgreSQL may choose to scan the table,
    expecting to stop early, and read every row)."""
    return Func(
        Subquery(queryset.values("pk")[:most]),
        template="(SELECT COUNT(*) FROM %(expressions)s AS counted)",
        output_field=IntegerField(),
    )


def position_queryset(pk, *, assignments, units, scope, unit, capacity, most=ASSIGNABLE_COUNTED):
    """The assignment ``pk`` annotated for ``position_of`` in one query: ``number``, its place among its
    annotator's assignments in its ``scope`` (project, task), oldest first; ``mine``, how many they have there;
    ``assignable``, the scope's ``units`` with room (``assigned`` below the scope's ``capacity`` field) that they
    have no assignment for, counted up to ``most`` (so that the read stops there however large the scope).
    ``unit``: the assignment's field naming its unit."""
    mine = assignments.objects.filter(
        **{f"{scope}_id": OuterRef(f"{scope}_id"), "annotator_id": OuterRef("annotator_id")}
    )
    free = units.objects.filter(
        WITH_ROOM, **{f"{scope}_id": OuterRef(f"{scope}_id"), "assigned__lt": OuterRef(f"{scope}__{capacity}")}
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
        .annotate(
            number=count_of(mine.filter(earlier)),
            mine=count_of(mine),
            assignable=count_at_most(free.order_by(*IN_ORDER), most),
        )
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
    """``lookup(annotator, pk)``: the assignment ``pk`` of this annotator with ``related`` and the annotator
    itself (others' are invisible: None; so is every assignment for no annotator). One query, compiled once per database connection
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
        if not found:
            return None
        found[0].annotator = annotator  # it is theirs: reading ``.annotator`` costs no query
        return found[0]


class FreeUnits:
    """The units of one scope still open to one annotator (room left under ``capacity``, none of theirs), in
    hand-out order (position, id), as ``claim`` reads them, through ``ScopeQueries``' compiled queries."""

    def __init__(self, queries, scope_id, annotator_id, capacity):
        self.queries = queries
        self.values = {"scope_id": scope_id, "annotator_id": annotator_id, "capacity": capacity}

    @staticmethod
    def _pk(found):
        return found[0].pk if found else None

    def pick(self):
        """The first one no other transaction has locked, locked now (skip-locked on PostgreSQL); its pk or None."""
        return self._pk(self.queries._pick.run(**self.values))

    def first(self):
        """The first one, locked or not (no lock taken); its pk or None."""
        return self._pk(self.queries._peek.run(**self.values))

    def lock(self, pk):
        """Wait for unit ``pk``'s lock and take it; whether it is still free."""
        return bool(self.queries._lock_unit.run(pk=pk, **self.values))


class ScopeQueries:
    """The reads of handing out and showing a protocol's assignments, compiled once per database connection
    (``annotation_site.prepared_queries``) for one protocol: ``assignments`` of ``units`` in a ``scope`` (its
    field on both, e.g. project / task), ``members`` of the scope, ``unit`` the assignment's field naming its
    unit, ``capacity`` the scope's field of how many assignments a unit takes. ``sentinels``: five distinct
    negative ids marking the values in the compiled SQL (lock: scope, annotator; open: scope, annotator;
    position: pk); the free-unit queries reuse the open read's and the position's (scope, annotator, pk) with
    ``CAPACITY_SENTINEL``."""

    def __init__(self, *, assignments, members, units, scope, unit, capacity, sentinels):
        lock_scope, lock_annotator, open_scope, open_annotator, position_pk = sentinels
        self._units = units

        def free(scope_id, annotator_id, capacity):
            theirs = assignments.objects.filter(**{f"{unit}_id": OuterRef("pk")}, annotator_id=annotator_id)
            return (
                units.objects.filter(WITH_ROOM, **{f"{scope}_id": scope_id}, assigned__lt=capacity)
                .exclude(Exists(theirs))
                .order_by(*IN_ORDER)
                .only("pk")
            )

        # the capacity's sentinel lies inside the slot counter's range (a negative one would make Django answer
        # "no rows" without SQL) and far above any real capacity
        free_sentinels = {"scope_id": open_scope, "annotator_id": open_annotator, "capacity": CAPACITY_SENTINEL}
        self._pick = Prepared(
            lambda **values: free(**values).select_for_update(skip_locked=True, of=("self",))[:1], **free_sentinels
        )
        self._peek = Prepared(lambda **values: free(**values)[:1], **free_sentinels)
        self._lock_unit = Prepared(
            lambda pk, **values: free(**values).filter(pk=pk).select_for_update(of=("self",))[:1],
            pk=position_pk,
            **free_sentinels,
        )
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
        self._taken = Prepared(
            lambda scope_id, annotator_id: (
                members.objects.filter(**{f"{scope}_id": scope_id, "annotator_id": annotator_id})
                .annotate(
                    taken=count_of(
                        assignments.objects.filter(
                            **{f"{scope}_id": OuterRef(f"{scope}_id"), "annotator_id": OuterRef("annotator_id")}
                        )
                    )
                )
                .only("pk")
                .order_by("pk")[:1]
            ),
            scope_id=lock_scope,
            annotator_id=lock_annotator,
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

    def taken(self, scope_id, annotator_id):
        """How many assignments the member has in the scope (a quota's count; 0 for a non-member)."""
        found = self._taken.run(scope_id=scope_id, annotator_id=annotator_id)
        return found[0].taken if found else 0

    def free(self, scope_id, annotator_id, capacity):
        """The annotator's free units in the scope (``FreeUnits``, for ``hand_out``)."""
        return FreeUnits(self, scope_id, annotator_id, capacity)

    def take(self, pk, capacity):
        """Take a slot of unit ``pk`` if it has one left (``assigned < capacity``); whether it did. One UPDATE,
        written once: ``assigned = assigned + 1`` on the row, so the last slot goes once whatever the database."""
        meta = self._units._meta
        quote = connection.ops.quote_name
        assigned = quote(meta.get_field("assigned").column)
        sql = (
            f"UPDATE {quote(meta.db_table)} SET {assigned} = {assigned} + 1 "
            f"WHERE {quote(meta.pk.column)} = %s AND {assigned} < %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [pk, capacity])
            return cursor.rowcount == 1

    def position(self, pk):
        """``Position(number, mine + assignable, more)`` of assignment ``pk`` (``position_queryset``); ``more``:
        the count of assignable units stopped at ``ASSIGNABLE_COUNTED``, so there are more than that."""
        [found] = self._position.run(pk=pk)
        return Position(found.number, found.mine + found.assignable, more_than_counted(found.assignable))


class Position(NamedTuple):
    """Where an assignment stands among its annotator's: ``number`` of ``total`` (``more``: at least that)."""

    number: int
    total: int
    more: bool = False
