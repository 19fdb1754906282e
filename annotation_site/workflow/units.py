"""Services every protocol's unit of work has (a factuality project, a judgment task), written once for any
model with a ``name``, a ``status`` (``Status.OPEN`` / ``Status.CLOSED``), a ``closed_at`` time, members
(``members__annotator``) and assignments (``assignments__annotator``, ``assignments__status``)."""

from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db.models import Count, F, IntegerField, Q, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from .statuses import AssignmentStatus

SUBMITTED = AssignmentStatus.SUBMITTED


def set_status(unit, status):
    """Open or close ``unit`` (closing records when); ValidationError for any other status."""
    statuses = type(unit).Status
    if status not in statuses.values:
        raise ValidationError({"status": f"status must be one of {', '.join(statuses.values)}"})
    unit.status = status
    unit.closed_at = timezone.now() if status == statuses.CLOSED else None
    unit.save(update_fields=["status", "closed_at"])
    return unit


def units_for(queryset, annotator):
    """The units of ``queryset`` an annotator is a member of, newest first, with their own counts ``mine`` and
    ``mine_done`` (one query)."""
    if annotator is None:
        return []
    return list(
        queryset.filter(members__annotator=annotator)
        .select_related("dataset")
        .annotate(
            mine=Count("assignments", filter=Q(assignments__annotator=annotator), distinct=True),
            mine_done=Count(
                "assignments", filter=Q(assignments__annotator=annotator, assignments__status=SUBMITTED), distinct=True
            ),
        )
        .order_by("-created_at")
    )


class SlotCounts(NamedTuple):
    units: int
    full: int  # units handed out to all their annotators: ``assigned`` at or above the capacity
    assigned: int  # slots taken (answered or not)
    slots: int  # per unit, the capacity or, when more annotators took it, their number


def slot_counts(units, capacity):
    """The SlotCounts of a queryset of units of one scope whose capacity is ``capacity`` (one query).

    A unit's slots are its capacity, or its annotators (``assigned``) when it has more: the capacity lowered
    after they took it, or an import that brought more (``capacity.above``). Their answers are work done, and
    counted in the total, so that the answers submitted never exceed the slots and the slots left to fill
    (slots - assigned) and the answers still awaited (assigned - submitted) are what is really left."""
    counts = units.aggregate(
        n=Count("id"),
        n_assigned=Sum("assigned"),
        n_full=Count("id", filter=Q(assigned__gte=capacity)),
        n_slots=Sum(Greatest(Value(capacity), F("assigned"), output_field=IntegerField())),
    )
    return SlotCounts(counts["n"], counts["n_full"], counts["n_assigned"] or 0, counts["n_slots"] or 0)


def assignment_counts(assignments):
    """``{annotator id: {"assigned", "submitted"}}`` of a queryset of assignments (one query)."""
    return {
        row["annotator_id"]: row
        for row in assignments.values("annotator_id").annotate(
            assigned=Count("id"), submitted=Count("id", filter=Q(status=SUBMITTED))
        )
    }


def annotators_of(members, worked, annotator_model):
    """``[(annotator, is member)]``: the unit's members (a queryset of its membership rows), then the annotators
    of ``worked`` (ids) who are not members any more (two queries)."""
    members = list(members.select_related("annotator__user"))
    known = {m.annotator_id for m in members}
    extra = list(annotator_model.objects.filter(pk__in=set(worked) - known).select_related("user"))
    return [(m.annotator, True) for m in members] + [(a, False) for a in extra]


def median_seconds(seconds):
    """The (upper) median of a list of times, None when there is none."""
    seconds = sorted(seconds)
    return seconds[len(seconds) // 2] if seconds else None


def totals(counts, capacity, rows):
    """The progress counts every protocol shows, from its units' SlotCounts and its annotators' rows: slots
    (``SlotCounts.slots``), how many of them are beyond the capacity (units with more annotators than it),
    the capacity, slots taken, answers submitted and the share done."""
    submitted = sum(r["submitted"] for r in rows)
    return {
        "slots": counts.slots,
        "above_capacity": counts.slots - counts.units * capacity,
        "capacity": capacity,
        "assigned": counts.assigned,
        "submitted": submitted,
        # every submitted answer holds a slot of its unit; the cap guards a unit counter set by hand
        "share": (min(submitted, counts.slots) / counts.slots) if counts.slots else 0.0,
        "annotators": rows,
    }
