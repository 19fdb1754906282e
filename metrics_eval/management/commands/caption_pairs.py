"""Import correct/foil caption pairs of a dataset (for pairwise ranking accuracy).

python manage.py caption_pairs --dataset NAME --import FILE --name foil [--replace]
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation_site import uploads
from annotation_site.corpus.models import Dataset
from metrics_eval import services
from metrics_eval.score_import import FormatError


class Command(BaseCommand):
    help = "Import correct/foil caption pairs (video_id, correct system, foil system) as a named pair set."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--import",
            dest="import_file",
            required=True,
            metavar="FILE",
            help=".csv with video_id,correct,foil, or .json/.jsonl objects with those keys",
        )
        parser.add_argument("--name", default="foil", help="pair set name (default foil)")
        parser.add_argument("--replace", action="store_true")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        path = Path(options["import_file"])
        if not path.is_file():
            raise CommandError(f"no file {path}")
        try:
            count = services.import_pairs(
                dataset, uploads.path_text(path), path.name, pair_set=options["name"], replace=options["replace"]
            )
        except FormatError as exc:
            raise CommandError(exc.describe()) from None
        except (services.MetricError, uploads.UploadRefused) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Imported {count} pairs into pair set {options['name']!r} of {dataset.name}")
