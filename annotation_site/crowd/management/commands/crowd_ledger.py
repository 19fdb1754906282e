"""The payment ledger.

python manage.py crowd_ledger show --study NAME            # rows by state, dispatches in doubt
python manage.py crowd_ledger apply --study NAME           # send planned rows (reconciles first)
python manage.py crowd_ledger retry --study NAME           # failed rows planned again, once their cause is fixed
python manage.py crowd_ledger resolve --dispatch ID --paid|--not-paid
python manage.py crowd_ledger export --study NAME [--s3]   # CSV to stdout, or to the bucket with a link
python manage.py crowd_ledger verify --study NAME --participant ID --code CODE
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation_site import spreadsheet_csv
from annotation_site.command_options import column
from annotation_site.crowd import exports, links, sending
from annotation_site.crowd.models import Dispatch, Participation, Study


class Command(BaseCommand):
    help = "Show, send, resolve and export the payment ledger; verify completion codes."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["show", "apply", "retry", "resolve", "export", "verify"])
        parser.add_argument("--study")
        parser.add_argument("--dispatch", type=column(Dispatch, "id", low=1), help="resolve: the dispatch's id.")
        paid = parser.add_mutually_exclusive_group()
        paid.add_argument("--paid", action="store_true")
        paid.add_argument("--not-paid", action="store_true")
        parser.add_argument("--s3", action="store_true")
        parser.add_argument("--participant")
        parser.add_argument("--code")

    def _study(self, name):
        study = Study.objects.filter(name=name or "").first()
        if study is None:
            raise CommandError(f"no study named {name!r}")
        return study

    def handle(self, *args, **o):
        action = o["action"]
        if action == "resolve":
            dispatch = Dispatch.objects.filter(pk=o["dispatch"]).first()
            if dispatch is None or not (o["paid"] or o["not_paid"]):
                raise CommandError("resolve needs --dispatch ID and --paid or --not-paid (after checking the platform)")
            try:
                sending.resolve_dispatch(dispatch, paid=o["paid"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"dispatch {dispatch.pk}: {'paid' if o['paid'] else 'not paid, rows planned again'}")
            return
        study = self._study(o["study"])
        if action == "show":
            self.stdout.write(json.dumps(sending.summary(study), indent=2))
        elif action == "apply":
            result = sending.apply_study(study)
            self.stdout.write(json.dumps(result, indent=2))
            if result.get("pending"):
                self.stderr.write(
                    f"{result['pending']} planned row(s) were not sent by this run (recorded or planned again while "
                    "it sent): run 'crowd_ledger apply' again to send them"
                )
        elif action == "retry":
            try:
                counts = sending.plan_failed_again(study)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(
                f"{counts['planned']} failed row(s) planned again ('crowd_ledger apply' sends them); "
                f"{counts['confirmed']} found done on the platform; {counts['unchecked']} could not be checked"
            )
        elif action == "export":
            from annotation_site.crowd.staff_views import LEDGER_COLUMNS, ledger_rows

            if o["s3"]:
                try:
                    self.stdout.write(json.dumps(exports.export_ledger(study), indent=2))
                except exports.ExportError as exc:
                    raise CommandError(str(exc)) from None
                return
            writer = spreadsheet_csv.writer(self.stdout)
            writer.writerow(LEDGER_COLUMNS)
            writer.writerows(ledger_rows(study))
        elif action == "verify":
            for p in (
                Participation.objects.filter(study=study, participant__platform_id=o["participant"] or "")
                .exclude(work_key="")
                .select_related("participant")
            ):
                if links.verify_code(study.pk, p.work_key, p.participant.worker_key, o["code"] or ""):
                    self.stdout.write(f"valid: {p.participant.platform_id} completed {p.unit_label} ({p.status})")
                    return
            raise CommandError("not a completion code of this participant in this study")
