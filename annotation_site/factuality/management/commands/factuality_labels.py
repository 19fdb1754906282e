from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation_site import uploads
from annotation_site.corpus.models import Dataset
from annotation_site.factuality import raw_labels
from annotation_site.factuality.models import Project
from annotation_site.problems import FormatError


class Command(BaseCommand):
    help = (
        "Raw per-annotator labels of a project as JSONL: --export FILE writes them (annotator ids "
        "anonymised unless --real-ids); --dataset NAME --import FILE reads them (the project is created on "
        "that dataset when needed; the file is validated completely, then written in one transaction)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--export", metavar="FILE", help="Write the labels to FILE ('-': standard output).")
        action.add_argument("--import", dest="import_file", metavar="FILE", help="Read labels from FILE.")
        parser.add_argument("--dataset", help="Dataset of the project (needed with --import).")
        parser.add_argument("--real-ids", action="store_true", help="Export the annotators' own ids.")
        parser.add_argument(
            "--own-export",
            action="store_true",
            help="Import: the file is this project's own export with --real-ids, so an id that is one of its "
            "annotators is that annotator (without it such an id is refused).",
        )

    def handle(self, *args, project, export, import_file, dataset, real_ids, **options):
        if export:
            found = Project.objects.filter(name=project).first()
            if found is None:
                raise CommandError(f"no project named {project!r}")
            text = raw_labels.export_lines(found, anonymise=not real_ids)
            if export == "-":
                self.stdout.write(text, ending="")
            else:
                Path(export).write_text(text, encoding="utf-8")
                self.stderr.write(f"Wrote {text.count(chr(10))} lines to {export}")
            return
        if not dataset:
            raise CommandError("--import needs --dataset NAME")
        found = Dataset.objects.filter(name=dataset).first()
        if found is None:
            raise CommandError(f"no dataset named {dataset!r}")
        path = Path(import_file)
        try:
            text = uploads.path_text(path)
        except uploads.UploadRefused as exc:
            raise CommandError(f"{exc}; nothing was imported") from None
        try:
            result, counts = raw_labels.import_lines(
                text, project_name=project, dataset=found, filename=path.name, own_export=options["own_export"]
            )
        except FormatError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {counts['lines']} labelled captions into project {result.name!r}: {counts['submissions']} "
                f"submissions from {counts['annotators']} annotators"
                + (f" ({counts['unchanged']} unchanged, not stored again)" if counts["unchanged"] else "")
            )
        )
        for warning in counts["warnings"]:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
