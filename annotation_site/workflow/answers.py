"""Storing an annotator's answer exactly once, whatever the protocol.

Every submit carries a UUID made by the client (kept for retries of the same answer). ``store_once`` returns
the stored submission when that UUID is known (a double click, a retry after a dropped connection, a
concurrent duplicate request) and writes a new one otherwise, under a lock on the work unit; the database's
unique constraint on the UUID is the last line of defence (an IntegrityError is answered with the row that
won). The exceptions are what a page or an API turns into 400 (invalid), 409 (needs confirmation, or a UUID
already used for another unit).
"""

import json
import uuid as uuid_module

from django.db import IntegrityError, transaction
from django.utils import timezone

from .statuses import AssignmentStatus

MAX_DRAFT_BYTES = 256 * 1024
MAX_SECONDS = 7 * 24 * 3600


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
