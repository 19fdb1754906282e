from django.core.management.base import BaseCommand, CommandError

from annotation_site import identities
from annotation_site.links import absolute_url
from assessment import services
from assessment.models import Campaign
from assessment.workers import worker_by_external_id


def refusal(name):
    """Why ``name`` cannot name a worker (``identities.named_id``'s words), or None."""
    try:
        identities.named_id(name)
    except identities.IdentityError as exc:
        return str(exc)
    return None


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
        names = [w.strip() for w in workers.split(",") if w.strip()]
        refused = [f"{name[:60]}: {exc}" for name in names if (exc := refusal(name))]
        if refused:  # every id checked before any HIT is handed out
            raise CommandError("no HIT was handed out; not valid worker ids:\n  " + "\n  ".join(refused))
        for name in names:
            worker = worker_by_external_id(name)
            assignment = services.assign(found, worker)
            if assignment is None:
                self.stderr.write(f"{name}: no HIT left for this worker")
                continue
            self.stdout.write(
                f"{name}\tHIT {assignment.hit.number}\t{absolute_url(services.assignment_path(assignment), base_url)}"
            )
