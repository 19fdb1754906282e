"""Crowd entry: how a participant without an account (an Annotator of kind ``crowd``) works on a task through
a signed link. The crowd platform code (annotation_site/crowd, issue #8) verifies who the participant is
(Prolific, a signed per-participant link, MTurk...) and then calls only this adapter:

- ``admit(task, provider=..., external_id=...)`` -> the participant's Annotator (created once per provider and
  id) and membership of the task;
- ``entry_url(task, annotator, limit=N, finish_url=...)`` -> where to send them: a signed, expiring address of
  the task's work page; ``limit`` caps how many items they take (a study's quota), ``finish_url`` is where
  they go once done (e.g. Prolific's completion URL with its code); both are inside the signature;
- ``next_unit(task, annotator, limit=N)`` -> their Assignment in progress or a newly claimed item (None when
  nothing is left for them or the quota is reached); ``next_path(participant)``: the page that goes with it;
- ``is_complete(task, annotator, limit=N)`` -> whether they have nothing left to do (no item open, and the
  quota reached or no item left for them), with ``progress`` giving the counts;
- ``release_open(task, annotator)`` -> give back an item they never submitted (a returned or timed-out place).

The pages and API endpoints accept the token instead of a login: the token names the task and the
annotator, so it can open only that participant's own items of that task.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from annotation_site import identities
from annotation_site.annotators.models import Annotator
from annotation_site.prepared_queries import Prepared
from annotation_site.workflow.slots import more_than_counted

from . import assignment as assigning
from .models import Assignment, Task
from .services import add_member

SALT = "annotation_site.judgment_tasks.participant"
DEFAULT_MAX_AGE = 7 * 24 * 3600  # seconds; settings.JUDGMENT_TASKS_TOKEN_MAX_AGE overrides


class TokenInvalid(Exception):
    """The link is not one we signed, or it expired (``expired`` tells which)."""

    def __init__(self, message, *, expired=False):
        super().__init__(message)
        self.expired = expired


@dataclass
class Participant:
    task: Task
    annotator: Annotator
    limit: int | None
    finish_url: str
    token: str


RESERVED_PROVIDER = "crowd"  # crowd studies' participants (workflow.crowd_units): never named directly


def admit(task, *, provider, external_id, display_name=""):
    """The crowd Annotator for (provider, external id), created once, made a member of the task. Both are read
    like every id from outside (``identities``: NFKC, no invisible or control characters, within their columns,
    outside the platform's reserved namespaces), so one person is one participant and nobody is admitted as a
    crowd study's participant; else ValueError saying what is wrong."""
    if isinstance(external_id, int) and not isinstance(external_id, bool):
        external_id = str(external_id)  # some panels' ids are numbers
    provider = identities.normalise(provider, what="provider", max_length=30)
    if provider.casefold() == RESERVED_PROVIDER:
        raise ValueError(
            f"the provider {RESERVED_PROVIDER!r} is the platform's own (participants of crowd studies); name the "
            "panel the participant comes from"
        )
    external_id = identities.external_id(external_id, what="participant id")
    annotator, _ = Annotator.objects.get_or_create(
        kind=Annotator.Kind.CROWD, provider=provider, external_id=external_id, defaults={"display_name": display_name}
    )
    add_member(task, annotator)
    return annotator


MAX_LIMIT = 1_000_000  # items one participant may take: a typing slip beyond that


def check_limit(limit):
    """Raise ValueError unless ``limit`` is None (no cap) or a whole number from 1 to MAX_LIMIT."""
    if limit is not None and (type(limit) is not int or not 1 <= limit <= MAX_LIMIT):
        raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}")


def token_for(task, annotator, *, limit=None, finish_url=""):
    check_limit(limit)
    return signing.dumps({"t": task.pk, "a": annotator.pk, "n": limit, "f": finish_url}, salt=SALT, compress=True)


def entry_url(task, annotator, *, limit=None, finish_url=""):
    """The path of the participant's work page (prefix the site's address)."""
    return reverse("tasks-participant", args=[token_for(task, annotator, limit=limit, finish_url=finish_url)])


def read_token(token):
    """The Participant a token names; raises TokenInvalid (``expired=True`` when only its age is wrong)."""
    max_age = getattr(settings, "JUDGMENT_TASKS_TOKEN_MAX_AGE", DEFAULT_MAX_AGE)
    try:
        data = signing.loads(token, salt=SALT, max_age=max_age)
    except signing.SignatureExpired:
        raise TokenInvalid("this link has expired", expired=True) from None
    except signing.BadSignature:
        raise TokenInvalid("this link is not valid") from None
    task_id, annotator_id = data.get("t"), data.get("a")
    task = next(iter(_TASK.run(pk=task_id)), None) if type(task_id) is int else None
    annotator = next(iter(_ANNOTATOR.run(pk=annotator_id)), None) if type(annotator_id) is int else None
    if task is None or annotator is None:
        raise TokenInvalid("this link points at a task or participant that no longer exists")
    return Participant(task=task, annotator=annotator, limit=data.get("n"), finish_url=data.get("f") or "", token=token)


# compiled once per database connection (annotation_site.prepared_queries): every participant request reads them
_TASK = Prepared(lambda pk: Task.objects.select_related("dataset").filter(pk=pk).order_by()[:1], pk=-914_270_023)
_ANNOTATOR = Prepared(lambda pk: Annotator.objects.filter(pk=pk).order_by()[:1], pk=-914_270_024)


def next_unit(task, annotator, *, limit=None):
    return assigning.next_assignment(task, annotator, limit=limit)


def next_path(participant):
    """Where the participant's Next goes: the page of their item in progress or of a newly claimed one, else
    (nothing left, the link's quota reached, the task closed) their end page, which sends them on to the
    platform's completion address once they are done. The next view redirects there; a submit that asks for
    the next page answers it."""
    try:
        found = next_unit(participant.task, participant.annotator, limit=participant.limit)
    except (assigning.TaskClosed, PermissionDenied):
        found = None
    if found is None:
        return reverse("tasks-participant-done", args=[participant.token])
    return reverse("tasks-participant-item", args=[participant.token, found.pk])


def progress(task, annotator, *, limit=None):
    """{"taken", "submitted", "open", "available", "more_available", "limit"} for one participant (two
    queries). ``available`` is counted up to ``slots.ASSIGNABLE_COUNTED``; ``more_available``: there may be more."""
    rows = list(Assignment.objects.filter(task=task, annotator=annotator).values_list("status", flat=True))
    submitted = sum(1 for status in rows if status == Assignment.Status.SUBMITTED)
    available = assigning.assignable_count(task, annotator)
    more = more_than_counted(available)
    if limit is not None and available >= limit - len(rows):
        available, more = max(limit - len(rows), 0), False
    return {
        "taken": len(rows),
        "submitted": submitted,
        "open": len(rows) - submitted,
        "available": available,
        "more_available": more,
        "limit": limit,
    }


def is_complete(task, annotator, *, limit=None):
    """Nothing left to do: no item open and none available (``progress(...)["taken"] == 0`` then means the
    task was full before they started)."""
    return nothing_left(progress(task, annotator, limit=limit))


def nothing_left(counts):
    """``is_complete`` of counts ``progress`` already gave."""
    return counts["open"] == 0 and counts["available"] == 0


def release_open(task, annotator):
    """Give back every item the participant holds without having submitted it; returns how many."""
    return sum(
        assigning.release(found)
        for found in Assignment.objects.filter(task=task, annotator=annotator, status=Assignment.Status.OPEN)
    )
