"""Compute or import per-caption metric scores of a dataset.

python manage.py metric_scores --dataset NAME --compute bleu4,meteor,rouge_l,cider
python manage.py metric_scores --dataset NAME --import FILE [--replace] [--metric-version V]
python manage.py metric_scores --dataset NAME --list
python manage.py metric_scores --dataset NAME --delete METRIC
"""

import shlex
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation_site import uploads
from annotation_site.corpus.models import Dataset
from metrics_eval import loaders, services, text_metrics
from metrics_eval.management.progress import progress_bar
from metrics_eval.score_import import FormatError


class Command(BaseCommand):
    help = "Compute the text metrics (BLEU-1..4, METEOR, ROUGE-L, CIDEr-D) of a dataset's captions, or import scores."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="dataset name")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument(
            "--compute", metavar="METRICS", help=f"comma-separated: {', '.join(text_metrics.TEXT_METRICS)}"
        )
        action.add_argument(
            "--import", dest="import_file", metavar="FILE", help="scores as .csv, .json or .jsonl (see docs/metrics.md)"
        )
        action.add_argument("--list", action="store_true", help="list the dataset's metrics")
        action.add_argument(
            "--delete",
            metavar="METRIC",
            help="delete a metric of the dataset with all its scores (stored reports stay)",
        )
        parser.add_argument(
            "--references", metavar="SETS", help="comma-separated reference sets to score against (default: all)"
        )
        parser.add_argument(
            "--background", action="store_true", help="queue the computation as a Celery job instead of running it here"
        )
        parser.add_argument("--replace", action="store_true", help="import: replace metrics of the same name")
        parser.add_argument("--metric-version", dest="metric_version", help="import: the metric's version")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        if options["list"]:
            found = loaders.metrics(dataset)
            for metric in found:
                self.stdout.write(f"{metric.name}\t{metric.source}\t{metric.n_scores} scores\t{metric.version}")
            if not found:  # (to stderr: the list on stdout is tab-separated rows for scripts, and stays empty)
                name = shlex.quote(dataset.name)
                self.stderr.write(
                    f"Dataset {dataset.name} has no metric scores yet. Compute text metrics with "
                    f"`manage.py metric_scores --dataset {name} --compute bleu4,meteor,rouge_l,cider` (any of "
                    f"{', '.join(text_metrics.TEXT_METRICS)}; needs Java; --background runs it as a job), or "
                    f"import a metric's scores with `manage.py metric_scores --dataset {name} --import FILE` "
                    "(.csv, .json or .jsonl; docs/metrics.md)."
                )
            return
        if options["delete"]:
            try:
                count = services.delete_metric(dataset, options["delete"])
            except services.UnknownMetric as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"Deleted metric {options['delete']} of {dataset.name} with its {count} scores")
            return
        if options["import_file"]:
            return self._import(dataset, Path(options["import_file"]), options)
        names = services.parse_names(options["compute"])
        reference_sets = services.parse_names(options["references"]) if options["references"] else None
        if options["background"]:
            try:
                job = services.start_compute_job(dataset, names, reference_sets=reference_sets)
            except services.MetricError as exc:
                raise CommandError(str(exc)) from None
            where = (
                "in a thread of this command, which waits for it before exiting (no broker configured)"
                if settings.CELERY_TASK_ALWAYS_EAGER
                else "on a Celery worker"
            )
            self.stdout.write(f"started job {job.pk} {where}; progress at /api/jobs/{job.pk}/")
            return
        try:
            with progress_bar(self, f"{dataset.name}: {', '.join(names)}", "step", options["verbosity"]) as progress:
                result = services.compute_scores(dataset, names, reference_sets=reference_sets, progress=progress)
        except (services.MetricError, text_metrics.JavaMissing) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Stored scores for {dataset.name}: {services.computed_summary(result)}")

    def _import(self, dataset, path, options):
        if not path.is_file():
            raise CommandError(f"no file {path}")
        try:
            text = uploads.path_text(path)
        except uploads.UploadRefused as exc:
            raise CommandError(str(exc)) from None
        try:
            result = services.import_scores(
                dataset, text, path.name, replace=options["replace"], version=options["metric_version"]
            )
        except FormatError as exc:
            raise CommandError(exc.describe()) from None
        self.stdout.write(
            "Imported "
            + ", ".join(f"{n} {name} scores" for name, n in result.metrics.items())
            + f" into {dataset.name}"
        )
