"""Handing out items: each annotator gets one item at a time, never the same item twice, until every item has
``annotators_per_item`` annotators; items go out in import order, so a half-done task already has fully judged
items. The annotator's TaskMember row is locked first (one annotator's simultaneous requests queue); the item
is claimed by ``workflow.slots.claim`` (skip-locked choice and a conditional UPDATE of the slot counter: the
last slot can only go once, on PostgreSQL and SQLite alike). The unique constraint (item, annotator) is the last
line of defence. ``limit`` caps how many items one annotator may take (crowd participants: a study's quota).
"""

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, F, Func, OuterRef, Q, Subquery

from annotation_site.prepared_queries import Prepared
from annotation_site.workflow import slots

from .models import Assignment, Item, Task, TaskMember


class TaskClosed(Exception):
    """The task is closed: no new items, no new answers."""


def _after_lock():
    """Called inside the transaction once the item row is locked (tests hold the transaction open here)."""


def open_assignment(task, annotator):
    found = _OPEN.run(task_id=task.pk, annotator_id=annotator.pk)
    return found[0] if found else None


def _free(task, annotator):
    return Item.objects.filter(task=task, assigned__lt=task.annotators_per_item).exclude(
        assignments__annotator=annotator
    )


def next_assignment(task, annotator, *, limit=None):
    """The annotator's assignment in progress, else a newly claimed item; None when nothing is left for them
    (or they reached ``limit`` items). Raises PermissionDenied for non-members, TaskClosed once closed.
    Six queries at most, whatever the task's size."""
    if task.status != Task.Status.OPEN:
        raise TaskClosed(f"task {task.name} is closed")
    with transaction.atomic():
        if not _LOCK_MEMBER.run(task_id=task.pk, annotator_id=annotator.pk):
            raise PermissionDenied("you are not a member of this task")
        current = open_assignment(task, annotator)
        if current is not None:
            return current
        if limit is not None and Assignment.objects.filter(task=task, annotator=annotator).count() >= limit:
            return None
        free = _free(task, annotator).order_by("position", "id").values_list("pk", flat=True)

        def take(pk):
            return Item.objects.filter(pk=pk, assigned__lt=task.annotators_per_item).update(assigned=F("assigned") + 1)

        claimed = slots.claim(free, take, after_lock=lambda: _after_lock())
        if claimed is not None:
            return Assignment.objects.create(task=task, item_id=claimed, annotator=annotator)
    return None


def assignable_count(task, annotator):
    """Items this annotator could still be handed (one query)."""
    return _free(task, annotator).count()


def position_of(assignment, *, limit=None):
    """("item 7 of 40"): this assignment's number among the annotator's, and how many they can have in all
    (theirs plus the items still open to them, capped by ``limit``). One query, compiled once per connection."""
    [found] = _POSITION.run(pk=assignment.pk)
    total = found.mine + found.assignable
    return found.number, min(total, limit) if limit else total


def assignment_for(annotator, pk):
    """An assignment of this annotator, with its task and item (others' are invisible: None). One query."""
    if annotator is None:
        return None
    found = _ASSIGNMENT.run(pk=int(pk), annotator_id=annotator.pk)
    return found[0] if found else None


# compiled once per database connection (annotation_site.prepared_queries): every submission reads it
_ASSIGNMENT = Prepared(
    lambda pk, annotator_id: (
        Assignment.objects.select_related("task", "item__video").filter(pk=pk, annotator_id=annotator_id).order_by()[:1]
    ),
    pk=-914_270_021,
    annotator_id=-914_270_022,
)


def _count(queryset):
    """A subquery counting ``queryset``'s rows (one row, no grouping)."""
    return Subquery(queryset.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n"))


def _position(pk):
    mine = Assignment.objects.filter(task_id=OuterRef("task_id"), annotator_id=OuterRef("annotator_id"))
    # assignable_count's items (``_free``), for the outer assignment's task and annotator
    free = Item.objects.filter(task_id=OuterRef("task_id"), assigned__lt=OuterRef("task__annotators_per_item")).exclude(
        Exists(Assignment.objects.filter(item_id=OuterRef("pk"), annotator_id=OuterRef(OuterRef("annotator_id"))))
    )
    return (
        Assignment.objects.filter(pk=pk)
        .annotate(
            number=_count(
                mine.filter(
                    Q(created_at__lt=OuterRef("created_at"))
                    | Q(created_at=OuterRef("created_at"), id__lte=OuterRef("id"))
                )
            ),
            mine=_count(mine),
            assignable=_count(free),
        )
        .only("pk")
        .order_by()
    )


_POSITION = Prepared(_position, pk=-914_270_025)

# the member's lock and their open assignment, compiled once per connection (run inside the transaction)
_LOCK_MEMBER = Prepared(
    lambda task_id, annotator_id: (
        TaskMember.objects.select_for_update(of=("self",))
        .filter(task_id=task_id, annotator_id=annotator_id)
        .order_by("pk")[:1]
    ),
    task_id=-914_270_026,
    annotator_id=-914_270_027,
)
_OPEN = Prepared(
    lambda task_id, annotator_id: Assignment.objects.filter(
        task_id=task_id, annotator_id=annotator_id, status=Assignment.Status.OPEN
    ).order_by("created_at", "id")[:1],
    task_id=-914_270_036,
    annotator_id=-914_270_037,
)


def release(assignment):
    """Give an item that was never submitted back (its slot returns to the pool)."""
    with transaction.atomic():
        if Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.OPEN, submissions__isnull=True
        ).delete()[0]:
            Item.objects.filter(pk=assignment.item_id, assigned__gt=0).update(assigned=F("assigned") - 1)
            return True
    return False
