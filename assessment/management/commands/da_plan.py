from django.core.management.base import BaseCommand, CommandError

from annotation_site.corpus.models import Dataset, System
from assessment import campaigns
from assessment.models import QCTest


class Command(BaseCommand):
    help = ("Create a Direct Assessment campaign over systems of a dataset plus a human caption set, and plan its "
            "HITs (system captions, hidden originals, degraded copies, repeats). Prints the seed: the same "
            "parameters and seed re-create the plan exactly.")

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Name of the new campaign.")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--systems", default="",
                            help="Comma-separated system names (default: every non-human system).")
        human = parser.add_mutually_exclusive_group(required=True)
        human.add_argument("--human-system", help="A human system of the dataset (is_human).")
        human.add_argument("--reference-set", help="A reference set, made into a human system on first use.")
        parser.add_argument("--hit-size", type=int, default=100)
        parser.add_argument("--pairs", type=int, default=10, help="Original/degraded pairs per HIT.")
        parser.add_argument("--repeats", type=int, default=10, help="Exact repeats per HIT.")
        parser.add_argument("--min-distance", type=int, default=None,
                            help="Minimum positions between a control item and its partner (default HIT size / 4).")
        parser.add_argument("--workers-per-hit", type=int, default=1)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--qc-test", choices=QCTest.values, default=QCTest.WILCOXON)
        parser.add_argument("--qc-threshold", type=float, default=0.05)
        parser.add_argument("--qc-min-pairs", type=int, default=10)
        parser.add_argument("--description", default="")

    def handle(self, *args, **o):
        dataset = Dataset.objects.filter(name=o["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {o['dataset']!r}")
        try:
            if o["reference_set"]:
                human = campaigns.human_system_from_references(dataset, o["reference_set"])
            else:
                human = System.objects.filter(dataset=dataset, name=o["human_system"]).first()
                if human is None:
                    raise CommandError(f"dataset {dataset.name} has no system {o['human_system']!r}")
            names = [n.strip() for n in o["systems"].split(",") if n.strip()]
            systems = list(System.objects.filter(dataset=dataset, is_human=False).exclude(pk=human.pk))
            if names:
                known = {s.name: s for s in System.objects.filter(dataset=dataset, name__in=names)}
                unknown = [n for n in names if n not in known]
                if unknown:
                    raise CommandError(f"dataset {dataset.name} has no system {', '.join(unknown)}")
                systems = [known[n] for n in names]
            campaign = campaigns.create_campaign(
                name=o["campaign"], dataset=dataset, systems=systems, human_system=human,
                description=o["description"], hit_size=o["hit_size"], pairs_per_hit=o["pairs"],
                repeats_per_hit=o["repeats"], min_control_distance=o["min_distance"],
                workers_per_hit=o["workers_per_hit"], seed=o["seed"], qc_test=o["qc_test"],
                qc_threshold=o["qc_threshold"], qc_min_pairs=o["qc_min_pairs"])
        except campaigns.CampaignError as exc:
            raise CommandError(str(exc)) from None
        n_hits = campaign.hits.count()
        self.stdout.write(self.style.SUCCESS(
            f"Planned campaign {campaign.name!r}: {n_hits} HITs of up to {campaign.hit_size} items over "
            f"{len(systems)} systems + human {human.name!r}; seed {campaign.seed}"))
