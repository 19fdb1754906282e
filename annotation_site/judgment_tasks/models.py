"""Configurable judgment tasks: a Task holds its definition (what each item shows, which questions are asked),
its Items (imported from JSONL), who may work on it (TaskMember), the work handed out (Assignment), the human
answers (Submission, one per submit, identified by the client's UUID) and, kept apart, the answers of models
(ModelAnswer: e.g. a VideoQA model's yes/no per question), which the reports score against the human majority.

Answers are stored as the validated JSON of the definition's questions (``definition.py`` says the shape);
the reports flatten them into long DataFrames (``frames.py``).
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotation_site.annotators.models import Annotator
from annotation_site.corpus.models import Dataset, Video, unique_name_field
from annotation_site.workflow.capacity import UNSET as UNSET_CAPACITY
from annotation_site.workflow.statuses import AssignmentStatus, SubmissionSource, UnitStatus


class Task(models.Model):
    Status = UnitStatus

    name = unique_name_field()
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="judgment_tasks")
    preset = models.CharField(max_length=40, blank=True, help_text="The preset the definition started from.")
    title = models.CharField(max_length=200, blank=True, help_text="What annotators see as the task's name.")
    description = models.TextField(blank=True)
    instructions = models.TextField(blank=True)
    definition = models.JSONField(help_text="What an item shows and the questions asked (see docs/tasks.md).")
    annotators_per_item = models.PositiveSmallIntegerField(
        default=3, help_text="How many different annotators answer each item (the overlap)."
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    annotators = models.ManyToManyField(Annotator, through="TaskMember", related_name="judgment_tasks")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "name"]
        constraints = [models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="task_overlap_positive")]

    def __str__(self):
        return self.name

    @property
    def is_open(self):
        return self.status == self.Status.OPEN

    @property
    def display_title(self):
        return self.title or self.name


class TaskMember(models.Model):
    """An annotator who may work on a task (invited account or admitted crowd participant). Its row is locked
    while the annotator is handed an item, so one annotator's simultaneous requests queue."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="members")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="task_memberships")
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "joined_at", "id"]
        constraints = [models.UniqueConstraint(fields=["task", "annotator"], name="taskmember_unique")]


class Item(models.Model):
    """One thing to judge: a video with named text fields and lists, as imported. ``system`` wrote the text
    judged (a captioner, a text-to-video generator), ``model`` produced what is shown for checking (e.g. a
    VC-Inspector version), ``subset`` groups items in the reports (e.g. FIFA's T2V / V2T). None of the three is
    ever shown to annotators."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=200, help_text="The item's id in the imported file (item_id).")
    video = models.ForeignKey(Video, on_delete=models.RESTRICT, related_name="task_items")
    system = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=100, blank=True)
    subset = models.CharField(max_length=100, blank=True)
    fields = models.JSONField(default=dict, help_text="{field name: text}")
    lists = models.JSONField(default=dict, help_text="{list name: [element text, ...]}")
    position = models.PositiveIntegerField(default=0)
    assigned = models.PositiveSmallIntegerField(default=0, help_text="Assignments handed out for this item.")
    capacity = models.PositiveSmallIntegerField(
        default=UNSET_CAPACITY,
        db_default=UNSET_CAPACITY,  # also for rows written by code that does not know the column (a rolling deploy)
        help_text="A copy of the task's annotators per item, for the index of the items with room "
        "(annotation_site/workflow/capacity.py).",
    )

    class Meta:
        ordering = ["task", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["task", "key"], name="item_unique_key")]
        indexes = [
            models.Index(fields=["task", "assigned", "position"], name="item_free_slots"),
            # the hand-out's order among the items with room: its read stops at the first free one
            models.Index(
                fields=["task", "position", "id"], condition=Q(assigned__lt=F("capacity")), name="item_room_in_order"
            ),
        ]

    def __str__(self):
        return self.key


class Assignment(models.Model):
    Status = AssignmentStatus

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="task_assignments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    draft = models.JSONField(null=True, blank=True, help_text="The page's unsaved state (never a judgment).")
    draft_saved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task", "annotator", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["item", "annotator"], name="taskassignment_item_once")]
        indexes = [models.Index(fields=["task", "annotator", "status"], name="taskassignment_annotator")]


class Submission(models.Model):
    Source = SubmissionSource

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="submissions")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="task_submissions")
    client_uuid = models.UUIDField(unique=True, help_text="Generated by the client; a retry sends the same one.")
    is_current = models.BooleanField(default=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.WEB)
    answers = models.JSONField(help_text="{question id: answer}, validated against the definition.")
    time_spent = models.FloatField(default=0, help_text="Seconds the page was in front of the annotator.")
    video_played = models.BooleanField(null=True, help_text="The video was played (unknown without a file).")
    confirmed_incomplete = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(is_current=True), name="tasksubmission_one_current"
            ),
            models.CheckConstraint(condition=Q(time_spent__gte=0), name="tasksubmission_time_spent_ok"),
        ]


class ModelAnswer(models.Model):
    """A model's answers to an item's questions (same shape as a human answer, for the questions it answers),
    imported from JSONL. Never mixed with human answers: the reports score them against the human majority."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="model_answers")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="model_answers")
    model = models.CharField(max_length=100)
    answers = models.JSONField()
    source = models.CharField(max_length=300, blank=True, help_text="File the answers came from.")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "model", "item"]
        constraints = [models.UniqueConstraint(fields=["item", "model"], name="modelanswer_unique")]
