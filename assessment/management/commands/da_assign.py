from django.core.management.base import BaseCommand, CommandError

from annotation_site.links import absolute_url
from assessment import services
from assessment.models import Campaign
from assessment.workers import worker_by_external_id


class Command(BaseCommand):
    help = (
        "Hand out HITs of a DA campaign to crowd workers and print each worker's signed link (one per "
        "assignment), or the campaign's entry link (--entry-link) to which a platform appends ?worker_id=ID."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--workers", default="", help="Comma-separated worker ids.")
        parser.add_argument(
            "--base-url",
            default=None,
            help="The platform's public address the links start with, e.g. https://da.example.org "
            "(default: the CAPTIONEVAL_BASE_URL setting, http://127.0.0.1:8000 unless "
            "configured).",
        )
        parser.add_argument(
            "--entry-link",
            action="store_true",
            help="Also print the campaign's entry link, to which a crowd platform appends the worker's id.",
        )

    def handle(self, *args, campaign, workers, base_url, entry_link, **options):
        found = Campaign.objects.filter(name=campaign).first()
        if found is None:
            raise CommandError(f"no campaign named {campaign!r}")
        if entry_link:
            self.stdout.write(f"{absolute_url(services.campaign_entry_path(found), base_url)}?worker_id=WORKER_ID")
        for name in [w.strip() for w in workers.split(",") if w.strip()]:
            worker = worker_by_external_id(name)
            assignment = services.assign(found, worker)
            if assignment is None:
                self.stderr.write(f"{name}: no HIT left for this worker")
                continue
            self.stdout.write(
                f"{name}\tHIT {assignment.hit.number}\t{absolute_url(services.assignment_path(assignment), base_url)}"
            )
