from django.core.management.base import BaseCommand, CommandError

from annotation_site.problems import FormatError
from assessment.csv_import import HEADER, import_judgments, summary_text


class Command(BaseCommand):
    help = (
        f"Import DA judgments collected elsewhere: a CSV with header {','.join(HEADER)}. Validated first, "
        "written in one transaction; a missing campaign is created with a dataset of the same name."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--campaign", required=True)
        parser.add_argument(
            "--own-download",
            action="store_true",
            help="The file is this platform's own judgments download: rows whose worker_id is a site account's "
            "(account:NAME) or a crowd participant's (prolific:ID, mturk:ID, ...) go to that existing worker "
            "(refused when there is none). Without it they are "
            "refused, as every id from outside that uses the reserved prefix.",
        )

    def handle(self, *args, file, campaign, own_download, **options):
        try:
            summary = import_judgments(campaign, file, own_download=own_download)
        except FormatError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"{file}: {exc.strerror or exc}") from None
        self.stdout.write(self.style.SUCCESS(summary_text(campaign, summary)))
