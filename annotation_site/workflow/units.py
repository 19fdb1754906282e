"""Services every protocol's unit of work has (a factuality project, a judgment task), written once for any
model with a ``name``, a ``status`` (``Status.OPEN`` / ``Status.CLOSED``), a ``closed_at`` time, members
(``members__annotator``) and assignments (``assignments__annotator``, ``assignments__status``)."""
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.utils import timezone

SUBMITTED = "submitted"  # the assignments' status once answered, in every protocol


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
    return list(queryset.filter(members__annotator=annotator).select_related("dataset").annotate(
        mine=Count("assignments", filter=Q(assignments__annotator=annotator), distinct=True),
        mine_done=Count("assignments", filter=Q(assignments__annotator=annotator,
                                                assignments__status=SUBMITTED), distinct=True),
    ).order_by("-created_at"))
