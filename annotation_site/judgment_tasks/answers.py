"""Checking an answer against the task definition and the item, storing it exactly once, drafts.

An answer, as the page and the API send it: ``{question id: value}`` where the value is

- likert: a point of the scale (an integer) or null; ``per`` a list: one per element of that list;
- choice: an option value (text) or null; ``per`` a list: one per element;
- pairs: ``[[left index, right index], ...]`` (0-based element indices, each pair once: a repeated pair is
  refused, as the page never sends one);
- text: a string (may be empty);
- count: a whole number from min to max, or null; ``per`` a list: one per element.

Hard problems (wrong shape, values off the scale, unknown options, pairs out of range or repeated, required text
missing) refuse the answer. Soft problems (a required answer left empty, no pair entered) refuse it unless the
annotator confirms; the submission records that they did.
"""

from dataclasses import dataclass
from uuid import UUID

from django.utils import timezone

from annotation_site.prepared_queries import Prepared
from annotation_site.workflow.answers import (
    AnswerInvalid,
    AnswerReads,
    NeedsConfirmation,
    clean_seconds,
    draft_too_large,
    parse_uuid,
    store_once,
)
from annotation_site.workflow.answers import write_submissions as workflow_write

from .assignment import TaskClosed
from .models import Assignment, Submission


@dataclass
class Problem:
    message: str
    code: str = "invalid"
    question: str | None = None
    element: int | None = None

    def as_dict(self):
        return {"code": self.code, "message": self.message, "question": self.question, "element": self.element}


@dataclass
class SubmitResult:
    submission: Submission
    created: bool


def element_name(definition, list_name, index):
    marker = next((entry["marker"] for entry in definition["lists"] if entry["name"] == list_name), "")
    return f"{marker}{index + 1}" if marker else f"{list_name} {index + 1}"


def _value_ok(question, value):
    kind = question["type"]
    if kind == "likert":
        return type(value) is int and question["scale"][0][0] <= value <= question["scale"][-1][0]
    if kind == "choice":
        return isinstance(value, str) and any(value == option for option, _ in question["options"])
    if kind == "count":
        return type(value) is int and question["min"] <= value <= question["max"]
    return False


def _describe(question):
    kind = question["type"]
    if kind == "likert":
        return f"a whole number from {question['scale'][0][0]} to {question['scale'][-1][0]}"
    if kind == "choice":
        return "one of " + ", ".join(repr(option) for option, _ in question["options"])
    return f"a whole number from {question['min']} to {question['max']}"


def check_answer(definition, lists, data, *, partial=False):
    """``(cleaned, problems, soft)``. ``lists``: the item's lists ({name: [text, ...]}). ``partial`` (model
    answers): only the questions given are checked, nothing may be empty, free text is not accepted."""
    problems, soft, cleaned = [], [], {}
    if not isinstance(data, dict):
        return {}, [Problem("the answer must be an object {question id: answer}", code="shape")], []
    known = {q["id"] for q in definition["questions"]}
    for extra in sorted(set(data) - known):
        problems.append(Problem(f"{extra}: no such question", code="shape", question=extra))
    for question in definition["questions"]:
        qid, kind = question["id"], question["type"]
        if partial and qid not in data:
            continue
        value = data.get(qid)
        prompt = f"“{question['prompt']}”"
        if kind == "text":
            if partial:
                problems.append(Problem(f"{qid}: model answers cannot be free text", code="shape", question=qid))
                continue
            value = "" if value is None else value
            if not isinstance(value, str) or len(value) > question["max_length"]:
                problems.append(
                    Problem(
                        f"{prompt}: must be text of at most {question['max_length']} characters",
                        code="text",
                        question=qid,
                    )
                )
                continue
            if question["required"] and not value.strip():
                problems.append(Problem(f"{prompt} needs an answer.", code="missing_text", question=qid))
            cleaned[qid] = value.strip()
        elif kind == "pairs":
            left, right = len(lists.get(question["left"], [])), len(lists.get(question["right"], []))
            if value is None:
                value = []
            if not isinstance(value, list):
                problems.append(
                    Problem(f"{prompt}: pairs must be a list of [left, right] indices", code="shape", question=qid)
                )
                continue
            pairs = set()
            for pair in value:
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not all(type(i) is int for i in pair)
                    or not 0 <= pair[0] < left
                    or not 0 <= pair[1] < right
                ):
                    problems.append(
                        Problem(
                            f"{prompt}: {pair!r} is not a pair of element indices (0-based, {left} x {right})",
                            code="pairs",
                            question=qid,
                        )
                    )
                    break
                if tuple(pair) in pairs:
                    first, second = (
                        element_name(definition, question[side], i) for side, i in zip(("left", "right"), pair)
                    )
                    problems.append(
                        Problem(
                            f"{prompt}: the pair {first}–{second} ({pair!r}) is given twice: give each pair once",
                            code="pairs",
                            question=qid,
                        )
                    )
                    break
                pairs.add(tuple(pair))
            else:
                if not pairs and question["required"] and not partial:
                    soft.append(
                        Problem(
                            f"{prompt}: no pair entered. Submit anyway if nothing matches.",
                            code="no_pairs",
                            question=qid,
                        )
                    )
                cleaned[qid] = [list(pair) for pair in sorted(pairs)]
        elif question.get("per"):
            size = len(lists.get(question["per"], []))
            if not isinstance(value, list) or len(value) != size:
                problems.append(
                    Problem(
                        f"{prompt}: must list {size} answers, one per element of {question['per']}",
                        code="shape",
                        question=qid,
                    )
                )
                continue
            out = []
            for index, entry in enumerate(value):
                where = element_name(definition, question["per"], index)
                if entry is None:
                    if partial:
                        problems.append(
                            Problem(f"{qid}, {where}: no answer", code="missing", question=qid, element=index)
                        )
                    elif question["required"]:
                        soft.append(
                            Problem(f"{prompt}, {where}: no answer yet.", code="missing", question=qid, element=index)
                        )
                elif not _value_ok(question, entry):
                    problems.append(
                        Problem(
                            f"{prompt}, {where}: must be {_describe(question)}, not {entry!r}",
                            code="value",
                            question=qid,
                            element=index,
                        )
                    )
                    entry = None
                out.append(entry)
            cleaned[qid] = out
        else:
            if value is None:
                if partial:
                    problems.append(Problem(f"{qid}: no answer", code="missing", question=qid))
                elif question["required"]:
                    soft.append(Problem(f"{prompt}: no answer yet.", code="missing", question=qid))
            elif not _value_ok(question, value):
                problems.append(
                    Problem(f"{prompt}: must be {_describe(question)}, not {value!r}", code="value", question=qid)
                )
                value = None
            cleaned[qid] = value
    return cleaned, problems, soft


def submit(assignment, data, *, client_uuid, confirm=False, time_spent=0, video_played=None):
    """Store an annotator's answer for their assignment, once per ``client_uuid`` (``workflow.answers.
    store_once``): a retry returns the stored submission without writing again; a new UUID for a submitted
    item replaces the current answer (the earlier one stays, no longer current). Six statements for a first
    answer (savepoint, lock, lookup, insert, status, release; seven when it replaces one), four for a retry
    (savepoint, lock, lookup, release), whatever the lengths of the item's lists."""
    uuid = parse_uuid(client_uuid)
    if uuid is None:
        raise AnswerInvalid([Problem("submission_uuid must be a UUID", code="uuid")])
    task = assignment.task
    result = {}

    def find(value):
        # the same query also says whether the assignment has a current answer (one the new one replaces); the
        # last find before write() runs under the assignment's lock, so write() can trust it
        stored, result["replaces"] = _READS.find(value, assignment.pk)
        return stored

    def check():
        if not task.is_open:
            raise TaskClosed(f"task {task.name} is closed: answers can no longer change")
        cleaned, problems, soft = check_answer(task.definition, assignment.item.lists, data)
        if problems:
            raise AnswerInvalid(problems)
        if soft and not confirm:
            raise NeedsConfirmation(soft)
        result.update(answers=cleaned, incomplete=bool(soft))

    def lock():
        _READS.lock(assignment.pk)

    def write():
        [submission] = write_submissions(
            [
                dict(
                    assignment=assignment,
                    answers=result["answers"],
                    client_uuid=uuid,
                    time_spent=clean_seconds(time_spent),
                    video_played=video_played if video_played in (True, False) else None,
                    confirmed_incomplete=result["incomplete"],
                )
            ],
            history=result["replaces"],
        )
        return submission

    submission, created = store_once(uuid, find=find, lock=lock, write=write, check=check)
    return SubmitResult(submission, created)


def write_submissions(entries, *, source=Submission.Source.WEB, history=True):
    """Write submissions in bulk (the web passes one): each entry a dict with assignment, answers, client_uuid,
    time_spent, video_played, confirmed_incomplete. Earlier answers of those assignments become history
    (``history=False``: the caller knows, under the assignment's lock, that there is none). Three queries for
    any number."""
    return workflow_write(
        Submission, Assignment, entries, lambda entry: {"answers": entry["answers"], "source": source}, history=history
    )


def save_draft(assignment, data):
    """Keep the page's unsaved state (one query): ``{"answer": {...}, "time_spent": s, "video_played": bool}``,
    stored as sent (a draft is never a judgment); refused when too large. The page stops saving drafts once it
    starts submitting, so a late draft cannot hide the answer just stored."""
    if not assignment.task.is_open:
        raise TaskClosed(f"task {assignment.task.name} is closed")
    if not isinstance(data, dict) or not isinstance(data.get("answer", {}), dict):
        raise AnswerInvalid([Problem("a draft must be an object with an answer object", code="shape")])
    draft = {
        "answer": data.get("answer") or {},
        "time_spent": clean_seconds(data.get("time_spent")),
        "video_played": bool(data.get("video_played")),
    }
    if draft_too_large(draft):
        raise AnswerInvalid([Problem("the draft is too large", code="size")])
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(draft=draft, draft_saved_at=now)
    assignment.draft, assignment.draft_saved_at = draft, now
    return now


def current_answer(assignment):
    """The annotator's current submitted answer in the page's shape (one query), or None."""
    found = _CURRENT.run(assignment_id=assignment.pk)
    if not found:
        return None
    current = found[0]
    return {"answer": current.answers, "time_spent": current.time_spent, "video_played": bool(current.video_played)}


def current_submission_uuid(assignment):
    """The client UUID of the assignment's current submission (a string), or None (one query): what the page's
    kept copy of an answer is based on (a copy made before the current submission is dropped)."""
    found = _CURRENT.run(assignment_id=assignment.pk)
    return str(found[0].client_uuid) if found else None


# an assignment's current submission (at most one: a unique constraint), compiled once per connection and without
# the default ordering, which follows the assignment's (task, annotator) and joined both tables
_CURRENT = Prepared(
    lambda assignment_id: (
        Submission.objects.filter(assignment_id=assignment_id, is_current=True)
        .only("pk", "answers", "time_spent", "video_played", "client_uuid")
        .order_by()[:1]
    ),
    assignment_id=-914_270_042,
)
# a submit's lock of the assignment's row and its lookup of the UUID (and of a current answer)
_READS = AnswerReads(
    Submission,
    Assignment,
    unit="item",
    sentinels=(UUID("00000000-0000-4000-8000-000914270071"), -914_270_072, -914_270_073),
)


def page_state(assignment):
    """What the page starts from: the draft, else the current submitted answer, else nothing."""
    if assignment.draft:
        return dict(assignment.draft, source="draft")
    current = current_answer(assignment)
    if current is not None:
        return dict(current, source="submitted")
    return {"answer": None, "time_spent": 0, "video_played": False, "source": "new"}
