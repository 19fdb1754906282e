"""Annotation projects: which captions of a dataset are judged, by whom, how many times, on which scale.

A Project is either the ActivityNet-Fact factuality protocol (``kind=factuality``: paragraph Likert 1-5,
sentence binary, erroneous word spans) or a per-caption rating on a configurable Likert scale
(``kind=rating``: VATEX-EVAL consistency, FIFA faithfulness, ...). Both hand out whole videos (every included
caption of a video together) to ``annotators_per_video`` different annotators.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation_site.annotators.models import Annotator
from annotation_site.corpus.models import Dataset, System, Video, unique_name_field
from annotation_site.deletion import SET_NULL_IN_BATCHES
from annotation_site.workflow.capacity import UNSET as UNSET_CAPACITY
from annotation_site.workflow.statuses import UnitStatus

from .labels import LabelSet


class Project(models.Model):
    class Kind(models.TextChoices):
        FACTUALITY = "factuality", "factuality (paragraph score, sentence errors, word spans)"
        RATING = "rating", "per-caption rating on a Likert scale"

    Status = UnitStatus

    class Rationale(models.TextChoices):
        OFF = "off", "not asked"
        OPTIONAL = "optional"
        REQUIRED = "required"

    name = unique_name_field()
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="factuality_projects")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.FACTUALITY)
    description = models.TextField(blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    annotators_per_video = models.PositiveSmallIntegerField(
        default=3, help_text="How many different annotators judge each video (the overlap)."
    )
    shuffle_systems = models.BooleanField(
        default=True, help_text="Show each annotator the captions of a video in their own random order."
    )
    instructions = models.TextField(help_text="Shown on the instructions page; [brackets] mark erroneous words.")
    systems = models.ManyToManyField(System, related_name="factuality_projects")
    annotators = models.ManyToManyField(Annotator, through="ProjectMember", related_name="factuality_projects")
    # rating projects
    question = models.CharField(max_length=300, blank=True, help_text="Rating projects: what the scale measures.")
    scale_min = models.SmallIntegerField(default=1)
    scale_max = models.SmallIntegerField(default=5)
    rationale = models.CharField(max_length=8, choices=Rationale.choices, default=Rationale.OFF)
    # results
    label_set = models.OneToOneField(
        LabelSet,
        null=True,
        blank=True,
        on_delete=SET_NULL_IN_BATCHES,
        related_name="project",
        help_text="The aggregated labels (factuality).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_video__gte=1), name="project_overlap_positive"),
            models.CheckConstraint(condition=Q(scale_max__gt=F("scale_min")), name="project_scale_ordered"),
        ]

    def __str__(self):
        return self.name

    @property
    def is_open(self):
        return self.status == self.Status.OPEN

    @property
    def is_rating(self):
        return self.kind == self.Kind.RATING


class ScaleAnchor(models.Model):
    """The label of one point of a rating project's scale (e.g. 1: "completely hallucinated")."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="anchors")
    value = models.SmallIntegerField()
    label = models.CharField(max_length=300)

    class Meta:
        ordering = ["project", "value"]
        constraints = [models.UniqueConstraint(fields=["project", "value"], name="scaleanchor_unique_value")]


class ProjectMember(models.Model):
    """An annotator invited to a project. Its row is locked while the annotator is handed a video, so one
    annotator's simultaneous requests are served one after the other."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="members")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="memberships")
    invited_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "invited_at", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "annotator"], name="projectmember_unique")]


class ProjectVideo(models.Model):
    """A video of a project, with the number of annotators it has been handed to (at most the overlap)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="project_videos")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="factuality_project_videos")
    position = models.PositiveIntegerField(default=0)
    assigned = models.PositiveSmallIntegerField(default=0, help_text="Assignments handed out for this video.")
    capacity = models.PositiveSmallIntegerField(
        default=UNSET_CAPACITY,
        db_default=UNSET_CAPACITY,  # also for rows written by code that does not know the column (a rolling deploy)
        help_text="A copy of the project's annotators per video, for the index of the videos with room "
        "(annotation_site/workflow/capacity.py).",
    )

    class Meta:
        ordering = ["project", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "video"], name="projectvideo_unique")]
        indexes = [
            models.Index(fields=["project", "assigned", "position"], name="projectvideo_free_slots"),
            # the hand-out's order among the videos with room: its read stops at the first free one
            models.Index(
                fields=["project", "position", "id"],
                condition=Q(assigned__lt=F("capacity")),
                name="projectvideo_room_in_order",
            ),
        ]


class Aggregation(models.Model):
    """One run of the aggregation of a factuality project into its label set, with its parameters."""

    class Ties(models.TextChoices):
        ERROR = "error", "ties count as an error (lower median)"
        NO_ERROR = "no_error", "ties count as no error (upper median)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="aggregations")
    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="aggregations")
    ties = models.CharField(max_length=8, choices=Ties.choices, default=Ties.ERROR)
    captions = models.PositiveIntegerField(default=0)
    sentences = models.PositiveIntegerField(default=0)
    spans = models.PositiveIntegerField(default=0)
    errors_without_spans = models.PositiveIntegerField(
        default=0, help_text="Sentences erroneous by majority with no word marked by a majority."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
