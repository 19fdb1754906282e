"""Payment decisions from quality control (a contract: scripts outside the repository call it).

    python manage.py crowd_payments --campaign NAME --policy approve-passing --dry-run --format json

prints ``{"campaign", "policy", "decisions": [{"worker_id", "hit_id", "action", "reason", "bonus", "state",
"qc": {"test", "p_value", "n_pairs", "threshold", "status"}}]}``, one decision per assignment. ``--dry-run``
records and sends nothing; without it the decisions are recorded in the ledger as planned, and ``--send`` also
sends them (a Celery task; eager without a broker). The policy and the bonus are the study's own settings unless
given, as on the payments page and in the API (``payments.run_settings``)."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation_site.crowd import adapters, payments
from annotation_site.crowd.models import BonusScope, Policy


class Command(BaseCommand):
    help = "Decide approvals, rejections and bonuses from quality control; record and send them."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign or project name.")
        parser.add_argument("--protocol", default="", help="da, factuality, ... (when the name is ambiguous).")
        parser.add_argument(
            "--policy", choices=Policy.values, default=None, help="Default: the study's policy (else approve-passing)."
        )
        parser.add_argument(
            "--bonus-scope", choices=BonusScope.values, default=None, help="Default: the study's bonus scope."
        )
        parser.add_argument("--bonus-amount", default=None, help="Bonus per HIT, e.g. 0.50. Default: the study's.")
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
        chosen, problems = payments.run_settings(
            study,
            {name: options[name] for name in payments.RUN_FIELDS},
            labels={"policy": "--policy", "bonus_scope": "--bonus-scope", "bonus_amount": "--bonus-amount"},
        )
        if problems:
            raise CommandError("; ".join(problems.values()))
        policy = chosen.policy

        def decide():
            return payments.run_decisions(adapter, target, chosen, study=study)

        if options["dry_run"]:
            if conflict := payments.mixed_settings(target):
                self.stderr.write(f"Warning: {conflict}")
            decisions = decide()
        else:
            # decided under the ledger's lock: a recording that waited for another uses the QC of now
            try:
                decisions, recorded = payments.decide_and_record(adapter, target, chosen, study=study)
            except payments.MixedSettings as exc:
                raise CommandError(str(exc)) from None
            self.stderr.write(f"{recorded.sentence()}.")
            if recorded.warning():
                self.stderr.write(f"Warning: {recorded.warning()}.")
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
