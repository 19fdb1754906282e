from django.core.management.base import BaseCommand, CommandError

from annotation_site.command_options import column, decimal_number, whole_number
from assessment import campaigns
from assessment.models import Campaign, QCTest


class Command(BaseCommand):
    help = (
        "Create a Direct Assessment campaign over systems of a dataset plus a human caption set, and plan its "
        "HITs (system captions, hidden originals, degraded copies, repeats). Layout values left out are "
        "suggested for the dataset (the paper's HIT of 100 items when it is large enough); a layout in which "
        "no worker can reach the QC minimum of pairs is refused with the values that would work. Prints the "
        "seed: the same parameters and seed re-create the plan exactly."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Name of the new campaign.")
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--systems", default="", help="Comma-separated system names (default: every non-human system)."
        )
        human = parser.add_mutually_exclusive_group(required=True)
        human.add_argument("--human-system", help="A human system of the dataset (is_human).")
        human.add_argument("--reference-set", help="A reference set, made into a human system on first use.")
        parser.add_argument(
            "--hit-size",
            type=whole_number(*campaigns.HIT_SIZE_RANGE),
            default=None,
            help="Items per HIT (default: suggested for the dataset; 100 when it is large enough).",
        )
        parser.add_argument(
            "--pairs",
            type=column(Campaign, "pairs_per_hit", low=1),
            default=None,
            help="Original/degraded pairs per HIT (default: suggested, 10 at most).",
        )
        parser.add_argument(
            "--repeats",
            type=column(Campaign, "repeats_per_hit"),
            default=None,
            help="Exact repeats per HIT (default: suggested).",
        )
        parser.add_argument(
            "--min-distance",
            type=column(Campaign, "min_control_distance", low=2),
            default=None,
            help="Minimum positions between a control item and its partner (default HIT size / 4).",
        )
        parser.add_argument(
            "--workers-per-hit",
            type=whole_number(1, campaigns.MAX_WORKERS_PER_HIT),
            default=None,
            help="Workers per HIT (default: suggested; at least 3 and a multiple of the HITs a "
            "worker needs to reach the QC minimum).",
        )
        parser.add_argument(
            "--watch-fraction",
            type=decimal_number(0, 1),
            default=None,
            help="Share of each clip that must really play before a score (default 0.9).",
        )
        parser.add_argument(
            "--watch-max-seconds",
            type=decimal_number(0, 86400),
            default=None,
            help="Cap of the required playback in seconds (default 30).",
        )
        parser.add_argument("--seed", type=whole_number(0, campaigns.MAX_SEED), default=None)
        parser.add_argument("--qc-test", choices=QCTest.values, default=QCTest.WILCOXON)
        parser.add_argument("--qc-threshold", type=decimal_number(0, 1), default=0.05)
        parser.add_argument("--qc-min-pairs", type=whole_number(1, campaigns.MAX_QC_MIN_PAIRS), default=10)
        parser.add_argument("--description", default="")

    def handle(self, *args, **o):
        try:
            campaign = campaigns.create_campaign_by_names(
                name=o["campaign"],
                dataset=o["dataset"],
                human_system=o["human_system"],
                reference_set=o["reference_set"],
                systems=[n.strip() for n in o["systems"].split(",") if n.strip()],
                description=o["description"],
                hit_size=o["hit_size"],
                pairs_per_hit=o["pairs"],
                repeats_per_hit=o["repeats"],
                min_control_distance=o["min_distance"],
                workers_per_hit=o["workers_per_hit"],
                seed=o["seed"],
                qc_test=o["qc_test"],
                qc_threshold=o["qc_threshold"],
                qc_min_pairs=o["qc_min_pairs"],
                watch_fraction=o["watch_fraction"],
                watch_max_seconds=o["watch_max_seconds"],
            )
        except campaigns.CampaignError as exc:
            raise CommandError(str(exc)) from None
        n_hits = campaign.hits.count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Planned campaign {campaign.name!r}: {n_hits} HITs of up to {campaign.hit_size} items over "
                f"{campaign.systems.count()} systems + human {campaign.human_system.name!r}; seed {campaign.seed}"
            )
        )
        self.stdout.write(campaigns.plan_summary(campaign))
