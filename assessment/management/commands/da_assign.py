from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from assessment import services
from assessment.models import Campaign


class Command(BaseCommand):
    help = ("Hand out HITs of a DA campaign to crowd workers and print each worker's signed link (one per "
            "assignment), or the campaign's entry link (--entry-link) to which a platform appends ?worker_id=ID.")

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--workers", default="", help="Comma-separated worker ids.")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--entry-link", action="store_true")

    def handle(self, *args, campaign, workers, base_url, entry_link, **options):
        found = Campaign.objects.filter(name=campaign).first()
        if found is None:
            raise CommandError(f"no campaign named {campaign!r}")
        base = base_url.rstrip("/")
        if entry_link:
            token = services.campaign_entry_token(found)
            self.stdout.write(f"{base}{reverse('da-join', args=[token])}?worker_id=WORKER_ID")
        for name in [w.strip() for w in workers.split(",") if w.strip()]:
            worker = services.worker_by_external_id(name)
            assignment = services.assign(found, worker)
            if assignment is None:
                self.stderr.write(f"{name}: no HIT left for this worker")
                continue
            token = services.assignment_token(assignment)
            self.stdout.write(f"{name}\tHIT {assignment.hit.number}\t{base}{reverse('da-rate-token', args=[token])}")
