"""Handing out items: each annotator gets one item at a time, never the same item twice, until every item has
``annotators_per_item`` annotators; items go out in import order, so a half-done task already has fully judged
items. The annotator's TaskMember row is locked first (one annotator's simultaneous requests queue); the item
is claimed by ``workflow.slots.claim`` (skip-locked choice and a conditional UPDATE of the slot counter: the
last slot can only go once, on PostgreSQL and SQLite alike). The unique constraint (item, annotator) is the last
line of defence. ``limit`` caps how many items one annotator may take (crowd participants: a study's quota).
"""

from django.core.exceptions import PermissionDenied

from annotation_site.workflow import slots
from annotation_site.workflow.answers import Refused

from .models import Assignment, Item, Task, TaskMember


class TaskClosed(Refused):
    """The task is closed: no new items, no new answers."""


def _after_lock():
    """Called inside the transaction once the item row is locked (tests hold the transaction open here)."""


def open_assignment(task, annotator):
    return _QUERIES.open_assignment(task.pk, annotator.pk)


NOT_A_MEMBER = "you are not a member of this task"


def _free(task, annotator):
    return Item.objects.filter(slots.WITH_ROOM, task=task, assigned__lt=task.annotators_per_item).exclude(
        assignments__annotator=annotator
    )


def next_assignment(task, annotator, *, limit=None):
    """The annotator's assignment in progress, else a newly claimed item; None when nothing is left for them
    (or they reached ``limit`` items). Raises PermissionDenied for non-members (``annotator`` None: an account
    that has no annotator record, so is a member of nothing), TaskClosed once closed.
    Six queries at most, whatever the task's size."""
    if task.status != Task.Status.OPEN:
        raise TaskClosed(f"task {task.name} is closed")
    if annotator is None:
        raise PermissionDenied(NOT_A_MEMBER)
    capacity = task.annotators_per_item
    return slots.hand_out(
        lock_member=lambda: _QUERIES.lock_member(task.pk, annotator.pk),
        refusal=NOT_A_MEMBER,
        current=lambda: open_assignment(task, annotator),
        free=_QUERIES.free(task.pk, annotator.pk, capacity),
        take=lambda pk: _QUERIES.take(pk, capacity),
        create=lambda pk: Assignment.objects.create(task=task, item_id=pk, annotator=annotator),
        after_lock=lambda: _after_lock(),
        full=None if limit is None else lambda: _QUERIES.taken(task.pk, annotator.pk) >= limit,
    )


def open_to(task, annotator):
    """The first ``slots.ASSIGNABLE_COUNTED`` items this annotator could still be handed, in hand-out order."""
    return _free(task, annotator).order_by(*slots.IN_ORDER)[: slots.ASSIGNABLE_COUNTED]


def assignable_count(task, annotator):
    """Items this annotator could still be handed, counted up to ``slots.ASSIGNABLE_COUNTED`` (one query)."""
    return open_to(task, annotator).count()


def position_of(assignment, *, limit=None):
    """("item 7 of 40"): this assignment's number among the annotator's, and how many they can have in all
    (theirs plus the items still open to them, capped by ``limit``). One query, compiled once per connection."""
    number, total, more = _QUERIES.position(assignment.pk)
    if limit and total >= limit:
        return slots.Position(number, limit)
    return slots.Position(number, total, more)


# an assignment of this annotator, with its task and item (others' are invisible: None), one query; every
# submission reads it
assignment_for = slots.AssignmentLookup(Assignment, "task", "item__video", sentinels=(-914_270_021, -914_270_022))


def release(assignment):
    """Give an item that was never submitted back (its slot returns to the pool)."""
    return slots.release(Assignment.objects.filter(pk=assignment.pk), Item.objects.filter(pk=assignment.item_id))


# the member's lock, their open assignment and an assignment's position, compiled once per connection
_QUERIES = slots.ScopeQueries(
    assignments=Assignment,
    members=TaskMember,
    units=Item,
    scope="task",
    unit="item",
    capacity="annotators_per_item",
    sentinels=(-914_270_026, -914_270_027, -914_270_036, -914_270_037, -914_270_025),
)
