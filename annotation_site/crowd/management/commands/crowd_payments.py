"""Payment decisions from quality control (a contract: scripts outside the repository call it).

    python manage.py crowd_payments --campaign NAME --policy approve-passing --dry-run --format json

prints ``{"campaign", "policy", "decisions": [{"worker_id", "hit_id", "action", "reason", "bonus", "state",
"qc": {"test", "p_value", "n_pairs", "threshold", "status"}}]}``, one decision per assignment. ``--dry-run``
records and sends nothing; without it the decisions are recorded in the ledger as planned, and ``--send`` also
sends them (a Celery task; eager without a broker)."""

import json
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from annotation_site.crowd import adapters, payments
from annotation_site.crowd.models import BonusScope, Policy
from annotation_site.strict_numbers import amount


class Command(BaseCommand):
    help = "Decide approvals, rejections and bonuses from quality control; record and send them."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign or project name.")
        parser.add_argument("--protocol", default="", help="da, factuality, ... (when the name is ambiguous).")
        parser.add_argument("--policy", choices=Policy.values, default=Policy.APPROVE_PASSING)
        parser.add_argument("--bonus-scope", choices=BonusScope.values, default=None)
        parser.add_argument("--bonus-amount", default=None, help="Bonus per HIT, e.g. 0.50.")
        parser.add_argument("--dry-run", action="store_true", help="Show the decisions; record and send nothing.")
        parser.add_argument("--send", action="store_true", help="Also send the recorded decisions.")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **options):
        try:
            adapter, target = (
                adapters.resolve(options["protocol"], options["campaign"])
                if options["protocol"]
                else adapters.find_target(options["campaign"])
            )
        except adapters.AdapterError as exc:
            raise CommandError(str(exc)) from None
        study = payments.provider_study(target)
        scope = options["bonus_scope"] or (study.bonus_scope if study else BonusScope.NONE)
        try:
            bonus = (
                amount(options["bonus_amount"], what="--bonus-amount")
                if options["bonus_amount"] is not None
                else (study.bonus_amount if study else Decimal("0"))
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        policy = options["policy"]

        def decide():
            return payments.preview(adapter, target, policy=policy, bonus_scope=scope, bonus_amount=bonus, study=study)

        decisions = decide()
        if not options["dry_run"]:
            written = payments.record(target, decisions, policy=policy)
            self.stderr.write(f"{written} ledger row(s) recorded as planned.")
            if options["send"]:
                from annotation_site.crowd.tasks import apply_payments

                for s in payments.target_studies(target):
                    result = apply_payments.delay(s.pk)
                    self.stderr.write(f"sending study {s.name}: task {result.id}")
            decisions = decide()  # again, with the ledger's states after recording
        document = payments.document(target, decisions, policy)
        if options["format"] == "json":
            self.stdout.write(json.dumps(document, indent=2))
            return
        totals = payments.totals(decisions)
        self.stdout.write(
            f"{target.name}: {totals['assignments']} assignments, policy {policy}: "
            f"{totals['approve']} approve, {totals['reject']} reject, {totals['review']} review, "
            f"bonuses {totals['bonus_total']:.2f} ({totals['bonus_count']})"
        )
        for d in document["decisions"]:
            qc = d["qc"]
            p = "" if qc["p_value"] is None else f" p={qc['p_value']:.3g}"
            self.stdout.write(
                f"  {d['worker_id']:<30} HIT {d['hit_id']:<8} {d['action']:<8} {d['state']:<10} "
                f"bonus {d['bonus'] or '-':<6} qc {qc['status']}{p}  {d['reason'][:60]}"
            )
