"""The report of a task asking every question type a definition supports (per item and per element of a list)
and naming every kind of figure, before any answer and once answered: the report page, its charts and
downloads, the API and ``task_report --format json`` all answer, and every question carries every key the
documented report contract names (``docs/tasks.md``, "task_report --format json"), None where a figure does not
apply. A question type added to the definitions without its report fails here (the definition below must cover
``QUESTION_TYPES`` and ``FIGURE_KINDS``)."""

import html
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation_site.judgment_tasks import charts, imports, reports
from annotation_site.judgment_tasks.definition import FIGURE_KINDS, QUESTION_TYPES

from .conftest import lines, work_through

pytestmark = pytest.mark.django_db

DEFINITION = {
    "fields": [{"name": "caption"}],
    "lists": [{"name": "facts", "marker": "F"}, {"name": "questions", "marker": "Q"}],
    "questions": [
        {"id": "score", "type": "likert", "prompt": "Score?", "scale": [[1, "bad"], [2, "fair"], [3, "good"]]},
        {"id": "row_score", "type": "likert", "prompt": "Each?", "scale": [[1, "no"], [2, "yes"]],
         "per": "questions", "with": "facts"},
        {"id": "kind", "type": "choice", "prompt": "Kind?", "options": [["a", "A"], ["b", "B"], ["c", "C"]]},
        {"id": "valid", "type": "choice", "prompt": "Valid?", "options": [["yes", "Yes"], ["no", "No"]],
         "per": "questions"},
        {"id": "matches", "type": "pairs", "prompt": "Which match?", "left": "facts", "right": "questions"},
        {"id": "comment", "type": "text", "prompt": "Anything else?"},
        {"id": "n", "type": "count", "prompt": "p", "min": 0, "max": 5},
        {"id": "objects", "type": "count", "prompt": "How many?", "max": 9, "per": "facts", "with": "questions"},
    ],
    "figures": [
        {"kind": "precision_recall", "question": "matches"},
        {"kind": "share", "question": "valid", "value": "yes"},
        {"kind": "model_accuracy", "question": "n"},
        {"kind": "alpha_by_model", "question": "objects"},
    ],
}  # fmt: skip

# The report contract of every question but free text (docs/tasks.md), and of free text.
QUESTION_KEYS = {
    "id", "type", "prompt", "per", "level", "alpha", "fleiss_kappa", "fleiss_units", "fleiss_raters",
    "fleiss_dropped", "fleiss_note", "units", "annotators", "labelled_units", "ties", "distribution", "warnings",
}  # fmt: skip
TEXT_KEYS = {"id", "type", "prompt", "answered"}

ITEMS = [
    {"item_id": f"i{n}", "video_id": f"c{n + 1}", "model": "m1" if n < 2 else "m2", "subset": "s1" if n % 2 else "s2",
     "caption": f"caption {n}", "facts": ["a man", "a dog"], "questions": ["Is there a man?", "Is there a dog?"]}
    for n in range(4)
]  # fmt: skip


def answer(item, a):
    """Annotator ``a``'s answer: mostly the same as the others', with some variation."""
    n = int(item.key[1:])
    return {
        "score": (n + a) % 3 + 1,
        "row_score": [1 + (n + a) % 2, 2],
        "kind": "abc"[(n + a) % 3],
        "valid": ["yes", "no" if a == 2 else "yes"],
        "matches": [[0, 0], [1, 1]] if a < 2 else [[0, 0]],
        "comment": "ok" if a else "",
        "n": (n + a) % 6,
        "objects": [n % 10, (n + a) % 10],
    }


def check_report(report):
    assert {q["type"] for q in report["questions"]} == set(QUESTION_TYPES)
    assert {f["kind"] for f in report["figures"]} == set(FIGURE_KINDS)
    for question in report["questions"]:
        keys = TEXT_KEYS if question["type"] == "text" else QUESTION_KEYS
        assert keys <= set(question), (question["id"], sorted(keys - set(question)))


def check_everything(staff_client, task):
    """Every way to read the report answers, and the report has the documented keys; returns the JSON report."""
    page = staff_client.get(reverse("tasks-report", args=[task.name]))
    assert page.status_code == 200
    text = html.unescape(page.content.decode())
    assert "Fleiss' kappa does not apply to a count" in text  # why the count questions have no kappa
    api = staff_client.get(reverse("api-tasks-report", args=[task.name]))
    assert api.status_code == 200
    check_report(api.json())
    out = StringIO()
    call_command("task_report", "--task", task.name, "--format", "json", stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue())
    check_report(report)
    assert report == api.json()
    for download in ("report.json", "figures.csv", "labels.csv", "labels.json", "answers.jsonl"):
        assert staff_client.get(reverse("tasks-download", args=[task.name, download])).status_code == 200, download
    report_download = json.loads(staff_client.get(reverse("tasks-download", args=[task.name, "report.json"])).content)
    assert report_download == report
    if report["judged_items"]:
        for chart in charts.chart_names(reports.task_report(task)[0]):
            svg = staff_client.get(reverse("tasks-chart", args=[task.name, chart, "svg"]))
            assert svg.status_code == 200 and b"<svg" in svg.content, chart
    return report


def test_the_report_of_every_question_type_with_and_without_answers(staff_client, make_task, annotator_accounts):
    annotators = annotator_accounts(3)
    task = make_task("every", "", ITEMS, members=annotators, definition=DEFINITION)
    imports.import_model_answers(
        task, lines(*[{"item_id": item["item_id"], "model": "M", "answers": {"n": 2}} for item in ITEMS])
    )

    report = check_everything(staff_client, task)  # no answer yet
    assert report["judged_items"] == 0
    by_id = {q["id"]: q for q in report["questions"]}
    for qid in ("n", "objects"):
        assert by_id[qid]["fleiss_kappa"] is None and by_id[qid]["fleiss_units"] is None
    assert by_id["score"]["fleiss_kappa"] is None and by_id["score"]["fleiss_units"] == 0  # defined, no units yet

    for a, annotator in enumerate(annotators):
        work_through(task, annotator, lambda item, a=a: answer(item, a))
    report = check_everything(staff_client, task)
    assert report["judged_items"] == 4 and report["answers"] == 12
    by_id = {q["id"]: q for q in report["questions"]}
    assert by_id["n"]["units"] == 4 and by_id["objects"]["units"] == 8  # counts: alpha (interval), no kappa
    assert by_id["n"]["alpha"]["interval"] is not None
    for qid in ("n", "objects"):
        assert by_id[qid]["fleiss_kappa"] is None
        assert (by_id[qid]["fleiss_units"], by_id[qid]["fleiss_raters"]) == (None, None)
    for qid in ("score", "row_score", "kind", "valid", "matches"):
        assert by_id[qid]["fleiss_units"] > 0 and by_id[qid]["fleiss_raters"] == 3, qid
        assert by_id[qid]["fleiss_note"] is None, qid
    assert by_id["comment"]["answered"] == 8  # two annotators wrote a comment on each of 4 items
