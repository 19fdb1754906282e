"""MTurk batches (AWS closed MTurk on 2026-09-30; the formats and archives live on).

python manage.py crowd_mturk export --study NAME [--out batch.csv] [--xml question.xml]
python manage.py crowd_mturk import results.csv --study NAME
python manage.py crowd_mturk approve-reject results.csv --study NAME --out upload.csv
python manage.py crowd_mturk publish --study NAME            # create HITs on MTURK_ENDPOINT_URL
python manage.py crowd_mturk archive --hits HIT1 HIT2 [--out archive.json]
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation_site import uploads
from annotation_site.crowd import mturk_formats, mturk_import, studies
from annotation_site.crowd.models import Study


class Command(BaseCommand):
    help = "Export MTurk batch input and ExternalQuestion, import results, write Approve/Reject, archive HITs."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["export", "import", "approve-reject", "publish", "archive"])
        parser.add_argument("file", nargs="?")
        parser.add_argument("--study")
        parser.add_argument("--out")
        parser.add_argument("--xml")
        parser.add_argument("--hits", nargs="*", default=[])

    def _write(self, text, path):
        if path:
            Path(path).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {path}")
        else:
            self.stdout.write(text, ending="")

    def handle(self, *args, **o):
        action = o["action"]
        if action == "archive":
            from annotation_site.crowd.providers.mturk import archive_hit, mturk_client

            client = mturk_client()
            archive = [archive_hit(client, hit) for hit in o["hits"]]
            self._write(json.dumps(archive, indent=2, default=str) + "\n", o["out"])
            return
        study = Study.objects.filter(name=o["study"] or "").first()
        if study is None:
            raise CommandError(f"no study named {o['study']!r}")
        if action == "export":
            text, xml = studies.mturk_batch(study)
            self._write(text, o["out"])
            if o["xml"]:
                Path(o["xml"]).write_text(xml, encoding="utf-8")
            return
        if action == "publish":
            for unit, hit in studies.publish_mturk_hits(study):
                self.stdout.write(f"{unit}\t{hit}")
            return
        if not o["file"]:
            raise CommandError(f"{action} needs the results CSV file")
        try:
            text = uploads.path_text(o["file"])
        except uploads.UploadRefused as exc:
            raise CommandError(f"{exc}; {mturk_formats.refusal_outcome(action)}") from None
        filename = Path(o["file"]).name
        try:
            if action == "import":
                result = mturk_import.import_results(study, text, filename=filename)
                self.stdout.write(json.dumps(result))
                for warning in result["warnings"]:  # (also in the JSON: its "warnings")
                    self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
            else:
                self._write(mturk_import.approve_reject_file(study, text, filename=filename), o["out"])
        except mturk_formats.FormatError as exc:
            raise CommandError(str(exc)) from None
