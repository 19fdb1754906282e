"""Downloads of a task: the report (JSON), the aggregated labels (CSV or JSON, one row per unit and question),
the report's figures as CSV, and the raw human answers (JSONL, one line per annotator and item)."""

import io
import json

from annotation_site import spreadsheet_csv
from annotation_site.workflow.downloads import attachment as attachment  # the pages' and the API's downloads

from . import reports
from .models import Submission


def report_json(report):
    return json.dumps(reports.jsonable(report), indent=2, ensure_ascii=False) + "\n"


def labels_csv(rows):
    buffer = io.StringIO()
    writer = spreadsheet_csv.DictWriter(buffer, fieldnames=reports.LABEL_COLUMNS)
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "votes": " ".join(f"{k}:{v}" for k, v in row["votes"].items()), "tie": int(row["tie"])})
    return buffer.getvalue()


def labels_json(rows):
    return json.dumps(reports.jsonable(rows), ensure_ascii=False) + "\n"


FIGURE_COLUMNS = ["figure", "question", "group", "measure", "value"]


def figure_rows(report):
    """The report's numbers as long rows (figure, question, group, measure, value): Table 2 / Table 3 style
    figures per subset and model, and each question's agreement."""
    rows = []
    for question in report["questions"]:
        if question["type"] == "text":
            continue
        for level, value in question["alpha"].items():
            rows.append(("agreement", question["id"], "all", f"alpha_{level}", value))
        rows.append(("agreement", question["id"], "all", "fleiss_kappa", question["fleiss_kappa"]))
        rows.append(("agreement", question["id"], "all", "units", question["units"]))
    for figure in report["figures"]:
        name, qid = figure["name"], figure["question"]
        if figure["kind"] in ("precision_recall", "share"):
            measures = ("precision", "recall") if figure["kind"] == "precision_recall" else ("share",)
            groups = [("all", figure)] + sorted(figure.get("subsets", {}).items())
            for group, values in groups:
                for measure in measures + (("items",) if figure["kind"] == "precision_recall" else ("units",)):
                    rows.append((name, qid, group, measure, values[measure]))
        elif figure["kind"] == "model_accuracy":
            for model, values in figure["models"].items():
                rows.append((name, qid, model, "accuracy", values["accuracy"]))
                for subset, sub in values.get("subsets", {}).items():
                    rows.append((name, qid, f"{model} / {subset}", "accuracy", sub["accuracy"]))
        elif figure["kind"] == "alpha_by_model":
            for model, values in figure["by_model"].items():
                for level, value in values["alpha"].items():
                    rows.append((name, qid, model, f"alpha_{level}", value))
    return [dict(zip(FIGURE_COLUMNS, row)) for row in rows]


def figures_csv(report):
    buffer = io.StringIO()
    writer = spreadsheet_csv.DictWriter(buffer, fieldnames=FIGURE_COLUMNS)
    writer.writeheader()
    writer.writerows(reports.jsonable(figure_rows(report)))
    return buffer.getvalue()


def answers_jsonl(task, *, anonymise=True):
    """Current human answers: ``{"item_id", "video_id", "annotator", "answers", "time_spent", "submitted_at"}``
    per line, by item then annotator; annotators as A1, A2... in order of first answer unless not anonymised."""
    rows = (
        Submission.objects.filter(assignment__task=task, is_current=True)
        .order_by("assignment__item__position", "assignment__item_id", "annotator_id")
        .values_list(
            "assignment__item__key",
            "assignment__item__video__external_id",
            "annotator_id",
            "annotator__user__username",
            "annotator__external_id",
            "answers",
            "time_spent",
            "created_at",
        )
    )
    rows = list(rows)
    names = {}
    for annotator_id in sorted({r[2] for r in rows}):
        names[annotator_id] = f"A{len(names) + 1}"
    lines = []
    for key, video, annotator_id, username, external, answers, seconds, created in rows:
        who = names[annotator_id] if anonymise else (username or external or str(annotator_id))
        lines.append(
            json.dumps(
                {
                    "item_id": key,
                    "video_id": video,
                    "annotator": who,
                    "answers": answers,
                    "time_spent": seconds,
                    "submitted_at": created.isoformat(),
                },
                ensure_ascii=False,
            )
        )
    return "".join(line + "\n" for line in lines)
