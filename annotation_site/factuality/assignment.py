"""Handing out videos: each annotator gets whole videos (every included caption of a video together), never
the same video twice, until every video has ``annotators_per_video`` annotators.

Concurrency. The annotator's ProjectMember row is locked first (``select_for_update``), so one annotator's
simultaneous requests (a double click, two tabs) are served one after the other. The next video is then
chosen with ``select_for_update(skip_locked=True)`` on PostgreSQL: a video row another annotator is taking at
this moment is skipped, so annotators arriving together take different videos without queueing. Only when
every free video is locked does a request wait, for the first one (and then looks again). A slot counter is
only ever incremented by a conditional UPDATE (``assigned < overlap``) on the locked row, so two annotators
arriving at once can never both take the last slot. On SQLite (no row locks) the IMMEDIATE transactions of
the settings serialise writers, which gives the same guarantee (the loop is ``workflow.slots.claim``, shared with
the judgment tasks). The unique constraint (video, annotator) is the last line of defence.
"""

import random
import secrets
import string

from django.core.exceptions import PermissionDenied

from annotation_site.corpus.models import Caption, Sentence
from annotation_site.prepared_queries import Prepared
from annotation_site.workflow import slots
from annotation_site.workflow.answers import Refused

from .models import Assignment, Project, ProjectMember, ProjectVideo


class ProjectClosed(Refused):
    """The project is closed: no new videos, no new answers."""


NOT_INVITED = "you are not invited to this project"


def _after_lock():
    """Called inside the transaction once the rows are locked (tests use it to hold a transaction open)."""


def open_assignment(project, annotator):
    return _QUERIES.open_assignment(project.pk, annotator.pk)


def next_assignment(project, annotator):
    """The annotator's assignment in progress, else a newly claimed video; None when nothing is left for them.

    Raises PermissionDenied for annotators not invited to the project (``annotator`` None: an account that has
    no annotator record, so is in no project) and ProjectClosed once it is closed.
    A constant number of queries (5 when a video is claimed)."""
    if project.status != Project.Status.OPEN:
        raise ProjectClosed(f"project {project.name} is closed")
    if annotator is None:
        raise PermissionDenied(NOT_INVITED)
    capacity = project.annotators_per_video

    def create(pk):
        return Assignment.objects.create(
            project=project, project_video_id=pk, annotator=annotator, shuffle_seed=secrets.randbits(62)
        )

    return slots.hand_out(
        lock_member=lambda: _QUERIES.lock_member(project.pk, annotator.pk),
        refusal=NOT_INVITED,
        current=lambda: open_assignment(project, annotator),
        free=_QUERIES.free(project.pk, annotator.pk, capacity),
        take=lambda pk: _QUERIES.take(pk, capacity),
        create=create,
        after_lock=lambda: _after_lock(),
    )


def open_to(project, annotator):
    """The first ``slots.ASSIGNABLE_COUNTED`` videos this annotator could still be handed, in hand-out order."""
    return (
        ProjectVideo.objects.filter(slots.WITH_ROOM, project=project, assigned__lt=project.annotators_per_video)
        .exclude(assignments__annotator=annotator)
        .order_by(*slots.IN_ORDER)[: slots.ASSIGNABLE_COUNTED]
    )


def assignable_count(project, annotator):
    """Videos this annotator could still be handed, counted up to ``slots.ASSIGNABLE_COUNTED`` (one query)."""
    return open_to(project, annotator).count()


def position_of(assignment):
    """("video 7 of 40"): this assignment's number among the annotator's, and how many they can have in all
    (theirs plus the videos still open to them). One query, compiled once per connection."""
    return _QUERIES.position(assignment.pk)


def paragraph_letter(index):
    """0 -> "A", 25 -> "Z", 26 -> "AA": the names paragraphs get on the page instead of system names."""
    letters = string.ascii_uppercase
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = letters[rest] + name
    return name


def presented_captions(assignment):
    """The captions of an assignment's video, in the order this annotator sees them, with their sentences:
    ``[(caption, [sentence, ...]), ...]``. Two queries (both compiled once per connection). The order is fixed by the assignment's seed (a shuffle
    of the captions in system order), so a reload or a draft finds the same paragraph at the same place."""
    project = assignment.project
    captions = _CAPTIONS.run(video_id=assignment.project_video.video_id, project_id=project.pk)
    if project.shuffle_systems:
        random.Random(assignment.shuffle_seed).shuffle(captions)
    sentences = {}
    for sentence in _SENTENCES.run(video_id=assignment.project_video.video_id, project_id=project.pk):
        sentences.setdefault(sentence.caption_id, []).append(sentence)
    return [(caption, sentences.get(caption.pk, [])) for caption in captions]


# an assignment of this annotator (others' are invisible: None), one query; every submission reads it
assignment_for = slots.AssignmentLookup(
    Assignment, "project__dataset", "project_video__video", sentinels=(-914_270_011, -914_270_012)
)
# compiled once per database connection (annotation_site.prepared_queries): every page and submission reads it
_CAPTIONS = Prepared(
    lambda video_id, project_id: (
        Caption.objects.filter(video_id=video_id, system__in=Project.objects.filter(pk=project_id).values("systems"))
        .select_related("system")
        .order_by("system__position", "system__name", "pk")
    ),
    video_id=-914_270_013,
    project_id=-914_270_014,
)


def release(assignment):
    """Give an unsubmitted video back (its slot returns to the pool)."""
    return slots.release(
        Assignment.objects.filter(pk=assignment.pk), ProjectVideo.objects.filter(pk=assignment.project_video_id)
    )


# the member's lock, their open assignment and an assignment's position, compiled once per connection
_QUERIES = slots.ScopeQueries(
    assignments=Assignment,
    members=ProjectMember,
    units=ProjectVideo,
    scope="project",
    unit="project_video",
    capacity="annotators_per_video",
    sentinels=(-914_270_018, -914_270_019, -914_270_028, -914_270_029, -914_270_017),
)
# the sentences of exactly those captions (the same filter, through the caption)
_SENTENCES = Prepared(
    lambda video_id, project_id: Sentence.objects.filter(
        caption__video_id=video_id,
        caption__system__in=Project.objects.filter(pk=project_id).values("systems"),
    ).order_by("caption_id", "index"),
    video_id=-914_270_015,
    project_id=-914_270_016,
)
