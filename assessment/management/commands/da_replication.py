import json

from django.core.management.base import BaseCommand, CommandError

from assessment import replication
from assessment.analysis import analyse
from assessment.models import Campaign


class Command(BaseCommand):
    help = (
        "Replication of a DA campaign run twice: the Pearson correlation of the system scores (raw and z) of "
        "two campaigns over the systems both scored (Graham, Awad & Smeaton 2018, Table 5)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--a", required=True, help="First campaign.")
        parser.add_argument("--b", required=True, help="Second campaign.")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, a, b, format, **options):
        runs = []
        for name in (a, b):
            campaign = Campaign.objects.select_related("human_system").filter(name=name).first()
            if campaign is None:
                raise CommandError(f"no campaign named {name!r}")
            runs.append(analyse(campaign).systems)
        result = {"a": a, "b": b, **replication.correlate(*runs)}
        if format == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(f"{a} vs {b}: {result['n_systems']} systems in common")
        for score in ("raw", "z"):
            self.stdout.write(f"  {score:<3}  r = {result[score]['r']:.3f}  (p = {result[score]['p_value']:.2g})")
