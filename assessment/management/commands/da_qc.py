from django.core.management.base import BaseCommand, CommandError

from annotation_site.command_options import column, decimal_number
from assessment import campaigns, quality_control, services
from assessment.models import Campaign, QCTest


class Command(BaseCommand):
    help = (
        "Compute and store the quality control of every worker of a DA campaign; options change the "
        "campaign's QC parameters first (they are stored with every result)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--test", choices=QCTest.values)
        parser.add_argument("--threshold", type=decimal_number(0, 1), help="A worker passes when p < this.")
        parser.add_argument(
            "--min-pairs", type=column(Campaign, "qc_min_pairs", low=1), help="Pairs a worker needs to be able to pass."
        )

    def handle(self, *args, campaign, test, threshold, min_pairs, **options):
        found = Campaign.objects.filter(name=campaign).first()
        if found is None:
            raise CommandError(f"no campaign named {campaign!r}")
        try:
            found = campaigns.change_qc(found, qc_test=test, qc_threshold=threshold, qc_min_pairs=min_pairs)
        except campaigns.CampaignError as exc:
            raise CommandError(str(exc)) from None
        qc = services.store_qc(found)
        counts = quality_control.status_counts(qc)
        self.stdout.write(
            self.style.SUCCESS(
                f"{int(qc['passed'].sum())} of {len(qc)} workers passed ({found.qc_test}, p < {found.qc_threshold}, "
                f">= {found.qc_min_pairs} pairs); "
                + ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in counts.items())
            )
        )
