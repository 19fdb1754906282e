"""Tasks: creating them (from a preset or a definition), editing the definition until work starts, members,
opening and closing, and the progress figures of the pages (a fixed number of queries each)."""

import copy

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count

from annotation_site.annotators.models import Annotator
from annotation_site.annotators.services import invite_with_link
from annotation_site.corpus.models import check_unit_name
from annotation_site.workflow import capacity, units

from . import presets
from .definition import DefinitionError, normalise
from .imports import read_items
from .models import Assignment, Item, ModelAnswer, Submission, Task, TaskMember


def _definition_errors(exc):
    return ValidationError({"definition": exc.problems})


def preset_definition(key):
    """A deep copy of a preset's definition (normalised), title and instructions."""
    if key not in presets.PRESETS:
        raise ValidationError({"preset": f"unknown preset {key!r}; choose from {', '.join(presets.PRESETS)}"})
    preset = presets.PRESETS[key]
    return normalise(copy.deepcopy(preset["definition"])), preset["title"], preset["instructions"]


_NOT_CHECKED = ["dataset", "created_by"]  # set by the platform, not from input


def create_task(
    *,
    name,
    dataset,
    preset="",
    definition=None,
    annotators_per_item=3,
    title="",
    description="",
    instructions="",
    created_by=None,
):
    """Create a task from a preset or a definition (a definition given wins over the preset's); raises
    ValidationError naming the field at fault."""
    try:
        check_unit_name(name)
    except ValidationError as exc:
        raise ValidationError({"name": exc.messages}) from None
    if Task.objects.filter(name=name).exists():
        raise ValidationError({"name": f"a task named {name!r} already exists"})
    if not 1 <= int(annotators_per_item) <= 50:
        raise ValidationError({"annotators_per_item": "annotators per item must be between 1 and 50"})
    default_title = default_instructions = ""
    if preset:
        normalised, default_title, default_instructions = preset_definition(preset)
    if definition is not None:
        try:
            normalised = normalise(definition)
        except DefinitionError as exc:
            raise _definition_errors(exc) from None
    elif not preset:
        raise ValidationError({"preset": "choose a preset or give a definition"})
    task = Task(
        name=name,
        dataset=dataset,
        preset=preset,
        title=title or default_title,
        description=description,
        instructions=instructions.strip() or default_instructions,
        definition=normalised,
        annotators_per_item=int(annotators_per_item),
        created_by=created_by,
    )
    task.full_clean(exclude=_NOT_CHECKED, validate_unique=False)  # lengths: PostgreSQL enforces them, SQLite not
    task.save()
    return task


def work_started(task):
    return Assignment.objects.filter(task=task).exists()


def update_definition(task, definition):
    """Replace the definition while no item was handed out. The task's items and model answers must fit the
    new definition (checked like an import; refused with every problem otherwise)."""
    try:
        normalised = normalise(definition)
    except DefinitionError as exc:
        raise _definition_errors(exc) from None
    with transaction.atomic():
        Task.objects.select_for_update().filter(pk=task.pk).first()
        if work_started(task):
            raise ValidationError(
                {
                    "definition": "work has started on this task (items were handed out): the "
                    "definition can no longer change"
                }
            )
        problems = _refit(task, normalised)
        if problems:
            raise ValidationError({"definition": problems})
        task.definition = normalised
        task.save(update_fields=["definition"])
    return task


def _refit(task, normalised):
    """Problems of the task's stored items and model answers under a new definition."""
    import json

    from annotation_site.problems import FormatError

    from .answers import check_answer

    rows = list(Item.objects.filter(task=task).select_related("video").order_by("position"))
    if not rows:
        return []
    probe = Task(name=task.name, dataset=task.dataset, definition=normalised)
    text = "\n".join(
        json.dumps(
            {
                "item_id": item.key,
                "video_id": item.video.external_id,
                **item.fields,
                **{k: v for k, v in item.lists.items() if v},
            }
        )
        for item in rows
    )
    problems = []
    try:
        read_items(probe, text, filename="stored items")
    except FormatError as exc:
        problems += [
            f"stored item {rows[p.line - 1].key}: {p.where}: {p.message}" if p.line else str(p)
            for p in exc.problems[:20]
        ]
    lists = {item.pk: item.lists for item in rows}
    for answer in ModelAnswer.objects.filter(task=task).only("item_id", "model", "answers")[:10000]:
        _, errors, _ = check_answer(normalised, lists[answer.item_id], answer.answers, partial=True)
        problems += [f"model answers of {answer.model}: {error.message}" for error in errors[:3]]
    return problems[:50]


def update_task(task, *, title=None, description=None, instructions=None, annotators_per_item=None):
    """Change what may change at any time (the definition has its own rule: ``update_definition``)."""
    if annotators_per_item is not None and not 1 <= int(annotators_per_item) <= 50:
        raise ValidationError({"annotators_per_item": "annotators per item must be between 1 and 50"})
    for name, value in (
        ("title", title),
        ("description", description),
        ("instructions", instructions),
        ("annotators_per_item", annotators_per_item),
    ):
        if value is not None:
            setattr(task, name, value)
    task.full_clean(exclude=_NOT_CHECKED, validate_unique=False)
    with transaction.atomic():
        task.save()
        # every time, not only when the overlap is given: this save writes every field, so a request that read
        # the task before another changed its overlap writes its older value back, and the copies must follow
        capacity.follow(Item.objects.filter(task=task), task.annotators_per_item)
    return task


def set_status(task, status):
    return units.set_status(task, status)


def add_member(task, annotator):
    TaskMember.objects.get_or_create(task=task, annotator=annotator)
    return annotator


def invite_to_task(task, username, *, email=""):
    invited = invite_with_link(username, email=email)
    add_member(task, invited.annotator)
    return invited


def is_member(task, annotator):
    return annotator is not None and TaskMember.objects.filter(task=task, annotator=annotator).exists()


def tasks_for(annotator):
    """The tasks an annotator is a member of, with their own counts (one query)."""
    return units.units_for(Task.objects.all(), annotator)


def progress(task):
    """Counts of a task and per annotator (five queries whatever the size)."""
    slots = units.slot_counts(Item.objects.filter(task=task), task.annotators_per_item)
    per_annotator = units.assignment_counts(Assignment.objects.filter(task=task))
    times = {}
    for annotator_id, seconds in Submission.objects.filter(assignment__task=task, is_current=True).values_list(
        "annotator_id", "time_spent"
    ):
        times.setdefault(annotator_id, []).append(seconds)
    rows = []
    for annotator, member in units.annotators_of(TaskMember.objects.filter(task=task), per_annotator, Annotator):
        counts = per_annotator.get(annotator.pk, {})
        rows.append(
            {
                "annotator": annotator,
                "member": member,
                "assigned": counts.get("assigned", 0),
                "submitted": counts.get("submitted", 0),
                "median_seconds": units.median_seconds(times.get(annotator.pk, [])),
            }
        )
    models = list(ModelAnswer.objects.filter(task=task).values("model").annotate(n=Count("id")).order_by("model"))
    return {
        "items": slots.units,
        "full_items": slots.full,
        **units.totals(slots, task.annotators_per_item, rows),
        "models": [(row["model"], row["n"]) for row in models],
    }
