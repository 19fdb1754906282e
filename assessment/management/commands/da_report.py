import json

from django.core.management.base import BaseCommand, CommandError

from assessment.analysis import analyse
from assessment.models import Campaign


class Command(BaseCommand):
    help = (
        "Report a DA campaign: worker QC, system scores (sorted by z, descending) and significant wins. "
        "--format json prints {parameters, workers, systems, wins}; every worker has a QC status (passed, "
        "failed, insufficient_data, in_progress) and the human caption set is a system with is_human true, "
        "scored from its hidden originals."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True)
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, campaign, format, **options):
        found = Campaign.objects.select_related("human_system").filter(name=campaign).first()
        if found is None:
            raise CommandError(f"no campaign named {campaign!r}")
        analysis = analyse(found)
        if format == "json":
            self.stdout.write(json.dumps(analysis.report(), indent=2))
            return
        p = analysis.parameters
        rate = "-" if p["pass_rate"] is None else f"{100 * p['pass_rate']:.1f} %"
        self.stdout.write(
            f"Campaign {campaign}: {p['n_judgments']} judgments, {p['n_workers']} workers, "
            f"{p['n_workers_passed']} passed QC ({p['qc_test']}, p < {p['qc_threshold']}, "
            f">= {p['qc_min_pairs']} pairs): pass rate {rate} of the workers with a verdict"
        )
        self.stdout.write(
            "QC status: "
            + ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in p["n_workers_by_status"].items())
        )
        self.stdout.write(f"{'rank':>4} {'cluster':>7}  {'system':<30} {'raw %':>7} {'z':>8} {'n':>8}")
        for row in analysis.systems.itertuples():
            name = row.system + (" (human)" if row.is_human else "")
            self.stdout.write(f"{row.rank:>4} {row.cluster:>7}  {name:<30} {row.raw:>7.1f} {row.z:>8.3f} {row.n:>8}")
        for a, b, p_value in analysis.wins:
            self.stdout.write(f"  {a} > {b}  (p = {p_value:.2g})")
