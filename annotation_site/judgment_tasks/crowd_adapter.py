"""Configurable judgment tasks plugged into crowd work (annotation_site.crowd), registered in
``JudgmentTasksConfig.ready``, the same way as Direct Assessment and factuality projects: a Study points at a
task as ``("task", task pk)`` and the crowd app (Prolific, signed links, MTurk files) asks only this adapter.

- a target is a Task; its units are its items (capacity ``annotators_per_item``): one crowd "HIT" is one item,
  as in FIFA's and VATEX-EVAL's crowd batches (one MTurk row per item); a signed-link study with
  ``hits_per_participant = N`` lets one person judge N items in a row;
- a participant is an Annotator of kind ``crowd`` (provider ``crowd``, external id = the participant's
  ``worker_key``: the same annotator whatever the protocol), made a member of the task on their first Start;
- the work page is the task's participant item page reached by the task's own signed token
  (``participants.token_for``), whose quota stops at this item and whose finish address is the crowd's end page
  (``crowd.hooks.finish_path``): the participant goes from the submitted item to the completion code, the
  redirect to Prolific, or MTurk's submit form;
- tasks have no hidden quality control: every submitted item's QC status is ``insufficient_data``
  (``approve-all`` approves, ``approve-passing`` sends to review);
- MTurk results: one row per item, the item named by ``Input.hit_id`` (our unit key, as the batch export writes
  it) or ``Input.item_id`` (the item's id in the imported file), one ``Answer.<question id>`` per question
  (numbers as text; per-element answers and pairs as JSON lists) or the same keys in ``Answer.taskAnswers``.
  Answers are checked against the definition like a web submit (hard problems refuse the file; an answer left
  empty is stored as incomplete); each is stored once under a UUID derived from the AssignmentId.
"""

import json
import uuid

from django.urls import reverse

from annotation_site import safe_json
from annotation_site.annotators.models import Annotator
from annotation_site.crowd import adapters, hooks
from annotation_site.crowd.adapters import Description, Unit, Work
from annotation_site.strict_numbers import ascii_int
from annotation_site.workflow.crowd_units import UnitsAdapter

from . import assignment as assigning
from . import participants
from .answers import check_answer, write_submissions
from .models import Assignment, Item, Submission, Task, TaskMember

PROTOCOL = "task"
NO_QC = "judgment tasks have no hidden quality control: approve all, or review"
IMPORT_NAMESPACE = uuid.UUID("b7d4f1c2-5a0e-4c8e-9f3d-2e6a1b9c7d41")  # submission ids of imported MTurk answers


class JudgmentTaskAdapter(UnitsAdapter, adapters.ProtocolAdapter):
    protocol = PROTOCOL
    crowd = adapters
    annotator_model, target_model, unit_model = Annotator, Task, Item
    assignment_model, member_model, submission_model = Assignment, TaskMember, Submission
    target_field, unit_field, capacity_field = "task", "item", "annotators_per_item"
    unit_label, unit_noun, unit_input = "item__key", "item", "item_id"
    no_qc, import_namespace, work_related = NO_QC, IMPORT_NAMESPACE, ("task", "annotator", "item")

    def release_assignment(self, found):
        return assigning.release(found)

    def unit_name(self, unit):
        return unit.key

    def describe(self, target):
        task = self._target(target)
        items = Item.objects.filter(task=task).order_by("position", "id").values_list("pk", "key")
        likert = next((q for q in task.definition.get("questions", []) if q.get("type") == "likert"), None)
        scale = (
            {"kind": "likert", "min": likert["scale"][0][0], "max": likert["scale"][-1][0]}
            if likert
            else {"kind": "task"}
        )
        return Description(
            title=task.display_title,
            description=task.description or task.display_title,
            units=[Unit(str(pk), key, task.annotators_per_item) for pk, key in items],
            estimated_minutes=2,
            scale=scale,
            statement=task.instructions,
        )

    def capacity(self, target):
        found = Task.objects.filter(pk=target.object_id).values_list("annotators_per_item", flat=True).first()
        return (found or 0) * Item.objects.filter(task_id=target.object_id).count()

    # --- slots ---------------------------------------------------------------------------------------------

    def _url(self, found, finish_url=""):
        """The item page by the task's own signed token: the quota stops at this item (the annotator's items
        so far), and the finish address is the crowd's end page."""
        taken = Assignment.objects.filter(task_id=found.task_id, annotator_id=found.annotator_id).count()
        finish = finish_url or hooks.finish_path(PROTOCOL, found.pk) or ""
        token = participants.token_for(found.task, found.annotator, limit=taken, finish_url=finish)
        return reverse("tasks-participant-item", args=[token, found.pk])

    def _work(self, found, *, finish_url="", last=None):
        return Work(
            key=str(found.pk),
            unit_key=str(found.item_id),
            unit_label=found.item.key,
            url=self._url(found, finish_url),
            completed=found.status == Assignment.Status.SUBMITTED,
            last_activity=last or found.draft_saved_at or found.created_at,
        )

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        task = self._target(target)
        annotator = self._member(task, worker_key)
        try:
            if unit_key is not None:
                found = self._claim(task, annotator, int(unit_key))
            else:
                found = assigning.next_assignment(task, annotator)
        except assigning.TaskClosed:
            return None
        if found is None:
            return None
        found = Assignment.objects.select_related("task", "annotator", "item").get(pk=found.pk)
        return self._work(found, finish_url=finish_url)

    def preview(self, target, unit_key):
        task = self._target(target)
        items = Item.objects.filter(task=task).select_related("video")
        item = (
            items.filter(pk=ascii_int(unit_key)).first() if ascii_int(unit_key) is not None else None
        ) or items.order_by("position", "id").first()
        if item is None:
            return {"statement": task.instructions, "items": []}
        text = " / ".join(str(value) for value in item.fields.values() if value)
        return {
            "statement": task.instructions or task.display_title,
            "items": [{"text": text, "video_url": item.video.playback_url or ""}],
        }

    # --- MTurk results -------------------------------------------------------------------------------------

    def plan(self, task, rows):
        """(problems as (line, field, message), [(row, item, cleaned answers, incomplete)])."""
        keys = {row.inputs.get("hit_id", "").strip() for row in rows} | {
            row.inputs.get("item_id", "").strip() for row in rows
        }
        numbers = [ascii_int(k) for k in keys if ascii_int(k) is not None]
        by_pk = {str(i.pk): i for i in Item.objects.filter(task=task, pk__in=numbers)}
        by_key = {i.key: i for i in Item.objects.filter(task=task, key__in=[k for k in keys if k])}
        questions = {q["id"]: q for q in task.definition.get("questions", [])}
        problems, plans = [], []
        for row, item in self.result_units(task, rows, by_pk, by_key, problems):
            data = {}
            for name, raw in row.answers.items():
                if name not in questions:
                    continue  # MTurk adds its own fields (e.g. a feedback box): not the task's questions
                data[name] = _decode(raw, questions[name])
            cleaned, hard, soft = check_answer(task.definition, item.lists, data)
            for problem in hard:
                field = f"Answer.{problem.question}" if getattr(problem, "question", None) else "Answer"
                problems.append((row.line, field, problem.message))
            if not hard:
                plans.append((row, item, cleaned, bool(soft)))
        return problems, plans

    def imported_entry(self, task, cleaned):
        return {"answers": cleaned}

    def write_imported(self, task, entries):
        write_submissions(entries, source=Submission.Source.IMPORT)


def _decode(raw, question):
    """An MTurk answer cell as the definition's value: numbers for Likert and counts, JSON for per-element
    answers and pairs, text as it is (a cell that is not valid JSON stays text: the check names it)."""
    text = raw if isinstance(raw, str) else json.dumps(raw)
    stripped = text.strip()
    if question["type"] == "text":
        return text
    if stripped == "":
        return None
    if question.get("per") or question["type"] == "pairs" or stripped[:1] in "[{":
        try:
            return safe_json.loads(stripped)
        except ValueError:  # (safe_json: also too deep, huge numbers, NUL, lone surrogates) the check names it
            return stripped
    if question["type"] in ("likert", "count"):
        number = ascii_int(stripped)  # ASCII digits only: "١٢", "+3" or "1e2" stay text and are refused by the check
        return stripped if number is None else number
    return stripped
