from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation_site.corpus.models import Dataset
from annotation_site.interchange import formats
from annotation_site.interchange.services import default_label_set, export_bundle


class Command(BaseCommand):
    help = "Export a dataset: factvc writes factuality_annotation.json (labelled captions); jsonl writes everything."

    def add_arguments(self, parser):
        parser.add_argument("--format", required=True, choices=formats.FORMATS)
        parser.add_argument("--name", required=True, help="Dataset name.")
        parser.add_argument("--out", required=True, help="Output file ('-' for standard output).")
        parser.add_argument("--labels", help="Label set to export (default: the imported one).")

    def handle(self, *args, format, name, out, labels, **options):
        dataset = Dataset.objects.filter(name=name).first()
        if dataset is None:
            raise CommandError(f"no dataset named {name!r}")
        if labels:
            label_set = dataset.label_sets.filter(name=labels).first()
            if label_set is None:
                raise CommandError(f"dataset {name!r} has no label set {labels!r}")
        else:
            label_set = default_label_set(dataset)
        if format == "factvc" and label_set is None:
            raise CommandError(
                f"dataset {name!r} has no factuality labels to export in the factvc format "
                "(name a label set with --labels, or export jsonl)"
            )
        bundle = export_bundle(dataset, label_set=label_set)
        try:
            text = formats.render(format, bundle)
        except formats.Unwritable as exc:
            raise CommandError(str(exc)) from None
        if out == "-":
            self.stdout.write(text, ending="")
        else:
            Path(out).write_text(text, encoding="utf-8")
            unlabelled = sum(1 for c in bundle.captions if c.paragraph_score is None)
            if format == "factvc" and unlabelled:
                self.stderr.write(f"warning: {unlabelled} captions without a paragraph score were left out")
            self.stderr.write(f"Wrote {out}")
