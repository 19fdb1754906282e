from django.core.management.base import BaseCommand, CommandError

from annotation_site.interchange import formats
from annotation_site.interchange.bundle import FormatError
from annotation_site.interchange.services import DEFAULT_LABEL_SET, ImportRefused, import_bundle
from annotation_site.uploads import UploadRefused


class Command(BaseCommand):
    help = (
        "Import a dataset: a FactVC folder (factuality_annotation.json, vids.txt, captions/), a zip of one, "
        "or a JSONL file. Everything is validated first and written in one transaction."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", required=True, choices=formats.FORMATS)
        parser.add_argument("--name", required=True, help="Name of the new dataset.")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace a dataset of the same name (refused "
            "when people's judgments are on it: the message says what would be lost).",
        )
        parser.add_argument(
            "--force-delete-judgments",
            action="store_true",
            help="With --replace: delete the human judgments on the old dataset too (export them first).",
        )
        parser.add_argument("--labels", default=DEFAULT_LABEL_SET, help="Name of the imported label set.")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--no-youtube",
            action="store_true",
            help="factvc: do not register YouTube URLs for ids that look like YouTube ids.",
        )

    def handle(
        self, *args, path, format, name, replace, labels, description, no_youtube, force_delete_judgments, **options
    ):
        try:
            bundle = formats.read_path(format, path, youtube=not no_youtube)
            result = import_bundle(
                bundle,
                name=name,
                source_format=format,
                replace=replace,
                label_set_name=labels,
                label_source=str(path),
                description=description,
                force_delete_judgments=force_delete_judgments,
            )
        except (FormatError, ImportRefused, UploadRefused) as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror or exc}") from None
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        counts = ", ".join(f"{n} {what}" for what, n in result.counts.items())
        labelled = f"; labels stored as {result.label_set.name!r}" if result.label_set else ""
        self.stdout.write(self.style.SUCCESS(f"Imported dataset {name!r}: {counts}{labelled}"))
