from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation_site import uploads
from annotation_site.judgment_tasks import imports
from annotation_site.judgment_tasks.models import Task
from annotation_site.problems import FormatError


class Command(BaseCommand):
    help = (
        "Import a task's items or model answers from JSONL (validated whole first; every problem names file, "
        "line and field; one transaction). Examples: task_import --task qq --items items.jsonl; "
        "task_import --task verify --model-answers videoqa.jsonl"
    )

    def add_arguments(self, parser):
        parser.add_argument("--task", required=True)
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--items", help="JSONL file of items.")
        what.add_argument("--model-answers", help="JSONL file of model answers.")
        parser.add_argument("--replace", action="store_true", help="items: replace every item (before work starts).")

    def handle(self, *args, task, items, model_answers, replace, **options):
        found = Task.objects.filter(name=task).first()
        if found is None:
            raise CommandError(f"no task named {task!r}")
        path = Path(items or model_answers)
        try:
            text = uploads.path_text(path)
        except uploads.UploadRefused as exc:
            raise CommandError(str(exc)) from None
        try:
            if items:
                counts = imports.import_items(found, text, filename=path.name, replace=replace)
                self.stdout.write(
                    f"Imported {counts['items']} items ({counts['elements']} list elements) into {found.name}"
                )
            else:
                counts = imports.import_model_answers(found, text, filename=path.name)
                self.stdout.write(
                    f"Imported {counts['answers']} answers of {counts['models']} models into {found.name}"
                )
        except FormatError as exc:
            raise CommandError(str(exc)) from None
        except imports.WorkStarted as exc:
            raise CommandError(str(exc)) from None
