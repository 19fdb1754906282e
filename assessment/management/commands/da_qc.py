from django.core.management.base import BaseCommand, CommandError

from assessment import quality_control, services
from assessment.models import Campaign, QCTest


class Command(BaseCommand):
    help = (
        "Compute and store the quality control of every worker of a DA campaign; options change the "
        "campaign's QC parameters first (they are stored with every result)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--test", choices=QCTest.values)
        parser.add_argument("--threshold", type=float)
        parser.add_argument("--min-pairs", type=int)

    def handle(self, *args, campaign, test, threshold, min_pairs, **options):
        found = Campaign.objects.filter(name=campaign).first()
        if found is None:
            raise CommandError(f"no campaign named {campaign!r}")
        if threshold is not None and not 0 < threshold < 1:
            raise CommandError("the threshold must lie between 0 and 1")
        changes = {
            k: v
            for k, v in (("qc_test", test), ("qc_threshold", threshold), ("qc_min_pairs", min_pairs))
            if v is not None
        }
        if changes:
            Campaign.objects.filter(pk=found.pk).update(**changes)
            found.refresh_from_db()
        qc = services.store_qc(found)
        counts = quality_control.status_counts(qc)
        self.stdout.write(
            self.style.SUCCESS(
                f"{int(qc['passed'].sum())} of {len(qc)} workers passed ({found.qc_test}, p < {found.qc_threshold}, "
                f">= {found.qc_min_pairs} pairs); "
                + ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in counts.items())
            )
        )
