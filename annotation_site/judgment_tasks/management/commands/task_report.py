import json
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation_site.judgment_tasks import exports, reports
from annotation_site.judgment_tasks.models import Task


class Command(BaseCommand):
    help = (
        "Report of a judgment task. --format json prints the report (per question agreement and labels "
        "counts, the FIFA / VC-Inspector figures); --format csv its figures as rows; --labels prints the "
        "aggregated label of every unit instead (csv or json). Warnings go to standard error."
    )

    def add_arguments(self, parser):
        parser.add_argument("--task", required=True)
        parser.add_argument("--format", choices=["json", "csv"], default="json")
        parser.add_argument("--labels", action="store_true", help="Print the aggregated labels per unit.")
        parser.add_argument(
            "--median-ties",
            choices=reports.MEDIAN_TIES,
            default="lower",
            help="Median of an even number of answers (default: lower).",
        )

    def handle(self, *args, task, format, labels, median_ties, **options):
        found = Task.objects.filter(name=task).first()
        if found is None:
            raise CommandError(f"no task named {task!r}")
        report, label_frames, items = reports.task_report(found, median_ties=median_ties)
        for question in report["questions"]:
            for warning in question.get("warnings", []):
                sys.stderr.write(f"warning: {question['id']}: {warning}\n")
        if labels:
            rows = reports.label_rows(found.definition, label_frames, items)
            text = exports.labels_csv(rows) if format == "csv" else exports.labels_json(rows)
        else:
            text = exports.figures_csv(report) if format == "csv" else json.dumps(reports.jsonable(report), indent=2)
        self.stdout.write(text.rstrip("\n"))
