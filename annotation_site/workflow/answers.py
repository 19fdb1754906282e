"""Storing an annotator's answer exactly once, whatever the protocol.

Every submit carries a UUID made by the client (kept for retries of the same answer). ``store_once`` returns
the stored submission when that UUID is known (a double click, a retry after a dropped connection, a
concurrent duplicate request) and writes a new one otherwise, under a lock on the work unit; the database's
unique constraint on the UUID is the last line of defence (an IntegrityError is answered with the row that
won). The exceptions are what a page or an API turns into 400 (invalid), 409 (needs confirmation, or a UUID
already used for another unit).
"""

import datetime
import json
import uuid as uuid_module

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from annotation_site.prepared_queries import Prepared

from .statuses import AssignmentStatus

MAX_DRAFT_BYTES = 256 * 1024
MAX_SECONDS = 7 * 24 * 3600


def draft_version(saved_at):
    """The version of an assignment's draft as its page and the draft endpoint name it: the time the server saved
    it (ISO 8601, or None when there is no draft). A page keeps its latest answer in the browser until a save of it
    is acknowledged, and compares the version it rendered with the one its last acknowledged save answered (both
    from this function, so equal strings mean the same save): the server's clock only, never the client's."""
    if saved_at is None:
        return None
    return saved_at.astimezone(datetime.timezone.utc).isoformat(timespec="microseconds")


class Refused(Exception):
    """The answer cannot be stored as sent (invalid, needs confirmation, or its unit is closed). A retry of an
    answer already stored is answered with that answer instead (``store_once``)."""


class AnswerInvalid(Refused):
    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class NeedsConfirmation(Refused):
    """Only soft problems: the annotator may confirm and submit anyway."""

    def __init__(self, problems):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


class SubmissionConflict(Exception):
    """The client UUID was already used for another assignment."""


def clean_seconds(value):
    """Seconds a page reported, as a float in [0, MAX_SECONDS] (anything unreadable counts as 0)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return 0.0
    return min(max(seconds, 0.0), MAX_SECONDS) if seconds == seconds else 0.0


def parse_uuid(value):
    """The client's submission UUID, or None when it is not one."""
    try:
        return uuid_module.UUID(str(value))
    except ValueError:
        return None


def draft_too_large(draft):
    return len(json.dumps(draft)) > MAX_DRAFT_BYTES


class AnswerReads:
    """The two reads of storing a protocol's answer, compiled once per database connection
    (``annotation_site.prepared_queries``; Django built and compiled them on every submit, about a third of a
    task submit's CPU): the lock of the assignment's row, and the submissions stored under a UUID or current
    for the assignment. ``unit``: what an assignment is of, in the conflict's message ("video", "item");
    ``sentinels``: a UUID and two distinct negative ids no query uses."""

    def __init__(self, submissions, assignments, *, unit, sentinels):
        uuid_sentinel, assignment_sentinel, lock_sentinel = sentinels
        self.unit = unit
        # the row only: the assignments' default ordering (by unit and annotator) would join their tables into
        # the statement and, on PostgreSQL, lock their rows too, so every submission of a unit would queue
        self._lock = Prepared(
            lambda pk: assignments.objects.select_for_update().filter(pk=pk).only("pk").order_by(), pk=lock_sentinel
        )
        # order_by(): the default ordering names related models, which would join their tables
        self._found = Prepared(
            lambda client_uuid, assignment_id: submissions.objects.filter(
                Q(client_uuid=client_uuid) | Q(assignment_id=assignment_id, is_current=True)
            ).order_by(),
            client_uuid=uuid_sentinel,
            assignment_id=assignment_sentinel,
        )

    def lock(self, assignment_pk):
        """Lock the assignment's row (inside a transaction)."""
        self._lock.run(pk=assignment_pk)

    def find(self, client_uuid, assignment_pk):
        """``(the submission stored under client_uuid or None, whether the assignment has a current one)``, one
        query; SubmissionConflict when the UUID was used for another assignment."""
        rows = self._found.run(client_uuid=client_uuid, assignment_id=assignment_pk)
        stored = next((row for row in rows if row.client_uuid == client_uuid), None)
        if stored is not None and stored.assignment_id != assignment_pk:
            raise SubmissionConflict(f"this submission id was already used for another {self.unit}")
        return stored, any(row.assignment_id == assignment_pk and row.is_current for row in rows)


def store_once(client_uuid, *, find, lock, write, check=None):
    """``(submission, created)``. ``find(uuid)`` returns the stored submission or None (and raises
    SubmissionConflict when the UUID belongs to another unit); ``check()`` validates the answer (raising a
    ``Refused``: AnswerInvalid, NeedsConfirmation, the unit closed); ``lock()`` locks the unit's row inside
    the transaction; ``write()`` stores and returns the new submission.

    A first answer is checked, then looked up once, under the lock: no lookup before the transaction (one
    statement fewer on every first answer, the common case). A retry is recognised by that lookup, or, when
    it no longer passes the check (the unit was closed meanwhile, say), by a lookup when the check refuses it:
    either way it is answered with the stored submission."""
    if check is not None:
        try:
            check()
        except Refused:
            stored = find(client_uuid)
            if stored is not None:
                return stored, False
            raise
    try:
        with transaction.atomic():
            lock()
            stored = find(client_uuid)  # a concurrent retry may have committed meanwhile
            if stored is not None:
                return stored, False
            return write(), True
    except IntegrityError:
        stored = find(client_uuid)
        if stored is None:
            raise
        return stored, False


def write_submissions(submission_model, assignment_model, entries, own_fields, *, history=True, then=None):
    """Write submissions in bulk (the web passes one, an import many) and mark their assignments submitted.
    Each entry is a dict with ``assignment``, ``client_uuid`` and optionally ``time_spent``, ``video_played``,
    ``confirmed_incomplete``; ``own_fields(entry)`` gives the protocol's own fields of its submission. Earlier
    submissions of those assignments become history first (``history=False``: the caller knows, under the
    assignment's lock, that there is none); ``then(submissions)`` writes the rows that hang off the new ones
    before the assignments are updated. Three queries, plus what ``then`` runs."""
    now = timezone.now()
    ids = [entry["assignment"].pk for entry in entries]
    if history:
        submission_model.objects.filter(assignment_id__in=ids, is_current=True).update(is_current=False)
    submissions = submission_model.objects.bulk_create(
        [
            submission_model(
                assignment_id=entry["assignment"].pk,
                annotator_id=entry["assignment"].annotator_id,
                client_uuid=entry["client_uuid"],
                time_spent=entry.get("time_spent", 0),
                video_played=entry.get("video_played"),
                confirmed_incomplete=entry.get("confirmed_incomplete", False),
                **own_fields(entry),
            )
            for entry in entries
        ],
        batch_size=1000,
    )
    if then is not None:
        then(submissions)
    assignment_model.objects.filter(pk__in=ids).update(
        status=AssignmentStatus.SUBMITTED, submitted_at=now, draft=None, draft_saved_at=None
    )
    return submissions
