import json

from django.core.management.base import BaseCommand, CommandError

from annotation_site.factuality import agreement
from annotation_site.factuality.aggregation import TIES
from annotation_site.factuality.models import Project


class Command(BaseCommand):
    help = (
        'Inter-annotator agreement of a project. --format json prints {"paragraph": {"ordinal", '
        '"interval", "units", "annotators"}, "sentence": {"nominal", ...}, "word": {"nominal", ...}} '
        '(rating projects: {"rating": {...}}); warnings go to standard error.'
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument(
            "--word-units",
            choices=agreement.WORD_UNITS,
            default="tokens",
            help="Word-level units: every token (default) or only words (no punctuation).",
        )
        parser.add_argument(
            "--ties",
            choices=TIES,
            default="error",
            help="Tie rule of the majority the per-annotator agreement compares with.",
        )

    def handle(self, *args, project, format, word_units, ties, **options):
        found = Project.objects.filter(name=project).first()
        if found is None:
            raise CommandError(f"no project named {project!r}")
        parameters = {} if found.is_rating else {"word_units": word_units, "ties": ties}
        report = agreement.jsonable(agreement.project_report(found, **parameters))
        levels = ["rating"] if found.is_rating else ["paragraph", "sentence", "word"]
        for level in levels:
            for warning in report[level]["warnings"]:
                self.stderr.write(f"warning: {level}: {warning}")
        summary = agreement.command_summary(report)
        if format == "json":
            self.stdout.write(json.dumps(summary))
            return
        for level, values in summary.items():
            figures = ", ".join(f"{key} {_fmt(value)}" for key, value in values.items())
            self.stdout.write(f"{level}: {figures}")


def _fmt(value):
    return f"{value:.3f}" if isinstance(value, float) else str(value)
