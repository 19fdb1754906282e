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

from django.db import transaction
from django.db.models import F, Max
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.crowd import adapters, hooks
from annotation_site.crowd.adapters import AssignmentRecord, Description, QCOutcome, Target, Unit, Work
from annotation_site.strict_numbers import ascii_int

from . import assignment as assigning
from . import participants
from .answers import check_answer, write_submissions
from .models import Assignment, Item, Submission, Task, TaskMember

PROTOCOL = "task"
NO_QC = "judgment tasks have no hidden quality control: approve all, or review"
IMPORT_NAMESPACE = uuid.UUID("b7d4f1c2-5a0e-4c8e-9f3d-2e6a1b9c7d41")  # submission ids of imported MTurk answers


class JudgmentTaskAdapter(adapters.ProtocolAdapter):
    protocol = PROTOCOL

    def target(self, name):
        found = Task.objects.filter(name=name).only("pk", "name").first()
        return Target(PROTOCOL, found.pk, found.name) if found else None

    def target_by_id(self, object_id):
        found = Task.objects.filter(pk=object_id).only("pk", "name").first()
        return Target(PROTOCOL, found.pk, found.name) if found else None

    def _task(self, target):
        return Task.objects.get(pk=target.object_id)

    def describe(self, target):
        task = self._task(target)
        items = Item.objects.filter(task=task).order_by("position", "id").values_list("pk", "key")
        likert = next((q for q in task.definition.get("questions", []) if q.get("type") == "likert"), None)
        scale = ({"kind": "likert", "min": likert["scale"][0][0], "max": likert["scale"][-1][0]} if likert
                 else {"kind": "task"})
        return Description(title=task.display_title, description=task.description or task.display_title,
                           units=[Unit(str(pk), key, task.annotators_per_item) for pk, key in items],
                           estimated_minutes=2, scale=scale, statement=task.instructions)

    def capacity(self, target):
        found = Task.objects.filter(pk=target.object_id).values_list("annotators_per_item", flat=True).first()
        return (found or 0) * Item.objects.filter(task_id=target.object_id).count()

    # --- slots ---------------------------------------------------------------------------------------------

    def _annotator(self, task, worker_key):
        annotator, _ = Annotator.objects.get_or_create(kind=Annotator.Kind.CROWD, provider="crowd",
                                                       external_id=worker_key)
        TaskMember.objects.get_or_create(task=task, annotator=annotator)
        return annotator

    def _url(self, found, finish_url=""):
        """The item page by the task's own signed token: the quota stops at this item (the annotator's items
        so far), and the finish address is the crowd's end page."""
        taken = Assignment.objects.filter(task_id=found.task_id, annotator_id=found.annotator_id).count()
        finish = finish_url or hooks.finish_path(PROTOCOL, found.pk) or ""
        token = participants.token_for(found.task, found.annotator, limit=taken, finish_url=finish)
        return reverse("tasks-participant-item", args=[token, found.pk])

    def _work(self, found, *, finish_url="", last=None):
        return Work(key=str(found.pk), unit_key=str(found.item_id), unit_label=found.item.key,
                    url=self._url(found, finish_url), completed=found.status == Assignment.Status.SUBMITTED,
                    last_activity=last or found.draft_saved_at or found.created_at)

    def assign(self, target, worker_key, *, unit_key=None, finish_url=""):
        task = self._task(target)
        annotator = self._annotator(task, worker_key)
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

    def _claim(self, task, annotator, item_pk):
        """The annotator's assignment on this very item (MTurk fixes the HIT), claimed while it has room."""
        with transaction.atomic():
            mine = Assignment.objects.filter(task=task, annotator=annotator, item_id=item_pk).first()
            if mine is not None:
                return mine
            taken = (Item.objects.filter(pk=item_pk, task=task, assigned__lt=task.annotators_per_item)
                     .update(assigned=F("assigned") + 1))
            if not taken:
                return None
            return Assignment.objects.create(task=task, item_id=item_pk, annotator=annotator)

    def work(self, target, work_key):
        found = (Assignment.objects.select_related("task", "annotator", "item")
                 .filter(pk=int(work_key), task_id=target.object_id).annotate(last=Max("submissions__created_at"))
                 .first())
        return None if found is None else self._work(found, last=found.last)

    def release(self, target, work_key):
        found = Assignment.objects.filter(pk=int(work_key), task_id=target.object_id).first()
        return bool(found) and assigning.release(found)

    def assignments(self, target):
        out = []
        for pk, external, item_key, status in (Assignment.objects.filter(task_id=target.object_id,
                                                                          annotator__kind=Annotator.Kind.CROWD)
                                               .values_list("pk", "annotator__external_id", "item__key", "status")):
            done = status == Assignment.Status.SUBMITTED
            qc = QCOutcome("insufficient_data" if done else "in_progress", detail=NO_QC if done else "")
            out.append(AssignmentRecord(str(pk), external, item_key, done, qc))
        return out

    def preview(self, target, unit_key):
        task = self._task(target)
        items = Item.objects.filter(task=task).select_related("video")
        item = (items.filter(pk=ascii_int(unit_key)).first() if ascii_int(unit_key) is not None else None) or \
            items.order_by("position", "id").first()
        if item is None:
            return {"statement": task.instructions, "items": []}
        text = " / ".join(str(value) for value in item.fields.values() if value)
        return {"statement": task.instructions or task.display_title,
                "items": [{"text": text, "video_url": item.video.playback_url or ""}]}

    # --- MTurk results -------------------------------------------------------------------------------------

    def answer_spec(self, target):
        return [], lambda answers: []  # answers are checked per item (their lists) in check_results

    def _plan(self, task, rows):
        """(problems as (line, field, message), [(row, item, cleaned answers, incomplete)])."""
        keys = {row.inputs.get("hit_id", "").strip() for row in rows} | {row.inputs.get("item_id", "").strip()
                                                                           for row in rows}
        numbers = [ascii_int(k) for k in keys if ascii_int(k) is not None]
        by_pk = {str(i.pk): i for i in Item.objects.filter(task=task, pk__in=numbers)}
        by_key = {i.key: i for i in Item.objects.filter(task=task, key__in=[k for k in keys if k])}
        questions = {q["id"]: q for q in task.definition.get("questions", [])}
        problems, plans, seen = [], [], {}
        for row in rows:
            hit, key = row.inputs.get("hit_id", "").strip(), row.inputs.get("item_id", "").strip()
            item = by_pk.get(hit) or by_key.get(key) or by_key.get(hit)
            if item is None:
                named = ("Input.hit_id", hit) if hit else ("Input.item_id", key)
                problems.append((row.line, named[0], f"no item {named[1]!r} in task {task.name}"))
                continue
            if (row.worker_id, item.pk) in seen:
                problems.append((row.line, "WorkerId", f"{row.worker_id} answered item {item.key} already on line "
                                                       f"{seen[(row.worker_id, item.pk)]}"))
                continue
            seen[(row.worker_id, item.pk)] = row.line
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

    def check_results(self, target, rows):
        return self._plan(self._task(target), rows)[0]

    def import_results(self, target, rows, worker_keys):
        task = self._task(target)
        _, plans = self._plan(task, rows)
        uuids = {row.assignment_id: uuid.uuid5(IMPORT_NAMESPACE, f"{task.pk}:{row.assignment_id}")
                 for row, *_ in plans}
        stored = dict(Submission.objects.filter(client_uuid__in=list(uuids.values()))
                      .values_list("client_uuid", "assignment_id"))
        out, entries = {}, []
        for row, item, cleaned, incomplete in plans:
            annotator = self._annotator(task, worker_keys[row.worker_id])
            found, created = Assignment.objects.get_or_create(task=task, item=item, annotator=annotator)
            if created:
                Item.objects.filter(pk=item.pk).update(assigned=F("assigned") + 1)
            out[row.assignment_id] = str(found.pk)
            if uuids[row.assignment_id] not in stored:
                entries.append(dict(assignment=found, answers=cleaned, client_uuid=uuids[row.assignment_id],
                                    time_spent=float(row.work_seconds or 0), video_played=None,
                                    confirmed_incomplete=incomplete))
        if entries:
            write_submissions(entries, source=Submission.Source.IMPORT)
        return out


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
            return json.loads(stripped)
        except ValueError:
            return stripped
    if question["type"] in ("likert", "count"):
        number = ascii_int(stripped)  # ASCII digits only: "١٢", "+3" or "1e2" stay text and are refused by the check
        return stripped if number is None else number
    return stripped
