"""Services every protocol's unit of work has (a factuality project, a judgment task), written once for any
model with a ``name``, a ``status`` (``Status.OPEN`` / ``Status.CLOSED``), a ``closed_at`` time, members
(``members__annotator``) and assignments (``assignments__annotator``, ``assignments__status``)."""

from django.core.exceptions import ValidationError
from django.db.models import Count, Q, Sum
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


def slot_counts(units, capacity):
    """``(units, units with all their annotators, slots taken)`` of a queryset of units (one query)."""
    counts = units.aggregate(
        n=Count("id"), n_assigned=Sum("assigned"), n_full=Count("id", filter=Q(assigned__gte=capacity))
    )
    return counts["n"], counts["n_full"], counts["n_assigned"] or 0


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


def totals(n_units, capacity, n_assigned, rows):
    """The progress counts every protocol shows: slots, taken, submitted and the share done."""
    total = n_units * capacity
    submitted = sum(r["submitted"] for r in rows)
    return {
        "slots": total,
        "assigned": n_assigned,
        "submitted": submitted,
        "share": (min(submitted, total) / total) if total else 0.0,
        "annotators": rows,
    }
