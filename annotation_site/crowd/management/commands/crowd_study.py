"""Studies on a crowd provider.

python manage.py crowd_study create --target NAME --provider prolific|link|mturk --name STUDY [--reward 1.50 ...]
python manage.py crowd_study publish|pause|close|sync|show --name STUDY
python manage.py crowd_study places --name STUDY --add 10
python manage.py crowd_study hits --name STUDY --hits-per-participant 3
python manage.py crowd_study links --name STUDY --participants P1 P2 [--days 7] [--max-hits N]
    (the links, like the entry address, admit participants only once the study is published: create and links
    say so on stderr while it is not)
python manage.py crowd_study release-idle
python manage.py crowd_study block --name STUDY --participants P1 [--reason "..."]
python manage.py crowd_study practice --name STUDY --text "..." --accept 0 30 --feedback "..." [--video-url URL]
"""

import json
from datetime import timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from annotation_site import uploads
from annotation_site.command_options import column, money, whole_number
from annotation_site.crowd import admission, studies
from annotation_site.crowd.config import MissingCredential
from annotation_site.crowd.models import PracticeItem, Study
from annotation_site.crowd.providers.base import AdmissionRefused
from annotation_site.crowd.providers.prolific_client import ProlificError, TransientError

FILE_SUFFIXES = (".txt", ".md", ".html", ".htm")


def consent_text(value):
    """``--consent``: the text itself, or the path of a file holding it, read like any file named on the
    command line (size, UTF-8, NUL: ``uploads.path_text``). A file that cannot be read, or a name that looks
    like a file's (one word ending in .txt, .md, .html) but names none, is an error: participants would
    otherwise be shown the path as the consent text."""
    if not value:
        return value
    path = Path(value)
    if path.exists():
        try:
            return uploads.path_text(path)
        except uploads.UploadRefused as exc:
            raise CommandError(f"--consent: {exc}") from None
    if not any(c.isspace() for c in value) and path.suffix.lower() in FILE_SUFFIXES:
        raise CommandError(f"--consent: no file {value} (give the consent text itself, or the path of a file)")
    return value


class Command(BaseCommand):
    help = "Create, publish, pause, close, sync studies; add places; make per-participant links."

    def add_arguments(self, parser):
        parser.add_argument(
            "action",
            choices=[
                "create",
                "publish",
                "pause",
                "close",
                "sync",
                "show",
                "places",
                "hits",
                "links",
                "release-idle",
                "practice",
                "block",
            ],
        )
        parser.add_argument("--name", help="Study name.")
        parser.add_argument("--target", help="create: campaign or project name.")
        parser.add_argument("--protocol", default="")
        parser.add_argument("--provider", choices=["prolific", "link", "mturk", "none"])
        parser.add_argument("--reward", type=money)
        parser.add_argument("--currency")
        parser.add_argument("--places", type=column(Study, "places"))
        parser.add_argument("--hits-per-participant", type=column(Study, "hits_per_participant", low=1))
        parser.add_argument(
            "--minutes", type=column(Study, "estimated_minutes", low=1), help="Estimated minutes per HIT."
        )
        parser.add_argument("--idle-minutes", type=column(Study, "idle_minutes", low=1))
        parser.add_argument("--id-parameter")
        parser.add_argument("--completion-code")
        parser.add_argument("--consent", help="Consent text (a file path, or the text).")
        parser.add_argument("--policy")
        parser.add_argument("--bonus-scope")
        parser.add_argument("--bonus-amount", type=money)
        parser.add_argument("--add", type=whole_number(1, studies.MAX_PLACES_ADDED), help="places: how many to add.")
        parser.add_argument("--participants", nargs="*", default=[])
        parser.add_argument("--days", type=whole_number(1, admission.MAX_LINK_DAYS), default=7)
        parser.add_argument(
            "--max-hits",
            type=whole_number(1, admission.MAX_LINK_HITS),
            default=None,
            help="HITs each link allows (default: the study's HITs per participant)",
        )
        parser.add_argument("--text", help="practice: the caption.")
        parser.add_argument(
            "--accept", nargs=2, type=column(PracticeItem, "accept_min"), help="practice: the range of right answers."
        )
        parser.add_argument("--scale", nargs=2, type=column(PracticeItem, "scale_min"), default=[0, 100])
        parser.add_argument("--feedback", default="")
        parser.add_argument("--video-url", default="")
        parser.add_argument("--reason", default="did not follow the instructions")

    def handle(self, *args, **o):
        action = o["action"]
        try:
            if action == "create":
                if not (o["target"] and o["name"] and o["provider"]):
                    raise CommandError("create needs --target, --name and --provider")
                consent = consent_text(o["consent"])
                fields = {
                    "reward": o["reward"],
                    "currency": o["currency"],
                    "places": o["places"],
                    "hits_per_participant": o["hits_per_participant"],
                    "estimated_minutes": o["minutes"],
                    "idle_minutes": o["idle_minutes"],
                    "id_parameter": o["id_parameter"],
                    "completion_code": o["completion_code"],
                    "consent_text": consent,
                    "policy": o["policy"],
                    "bonus_scope": o["bonus_scope"],
                    "bonus_amount": o["bonus_amount"],
                }
                study = studies.create_study(
                    o["protocol"], o["target"], name=o["name"], provider=o["provider"], **fields
                )
                self.stdout.write(
                    f"created study {study.name} ({study.provider}) for {study.protocol} "
                    f"{study.target_name}; entry: {studies.entry_url(study)}"
                )
                self._warn_unpublished(study)
                if warning := studies.qc_warning(study):
                    self.stderr.write(self.style.WARNING(f"warning: {warning}"))
                return
            if action == "release-idle":
                self.stdout.write(f"released {admission.release_idle()} idle task(s)")
                return
            study = Study.objects.filter(name=o["name"] or "").first()
            if study is None:
                raise CommandError(f"no study named {o['name']!r}")
            if action == "publish":
                studies.publish(study)
            elif action == "pause":
                studies.pause(study)
            elif action == "close":
                studies.close(study)
            elif action == "places":
                studies.add_places(study, o["add"] or 0)
            elif action == "hits":
                if o["hits_per_participant"] is None:
                    raise CommandError("hits needs --hits-per-participant N")
                studies.set_hits_per_participant(study, o["hits_per_participant"])
                if warning := studies.qc_warning(study):
                    self.stderr.write(self.style.WARNING(f"warning: {warning}"))
            elif action == "sync":
                self.stdout.write(json.dumps(admission.sync_submissions(study)))
                return
            elif action == "links":
                made = admission.create_participant_links(
                    study,
                    o["participants"],
                    max_hits=o["max_hits"],
                    expires_at=timezone.now() + timedelta(days=o["days"]),
                )
                for pid, token in made:
                    self.stdout.write(f"{pid}\t{studies.participant_link_url(token)}")
                self._warn_unpublished(study)
                if warning := studies.qc_warning(study):
                    self.stderr.write(self.style.WARNING(f"warning: {warning}"))
                return
            elif action == "block":
                self.stdout.write(f"blocked {admission.block(study, o['participants'], o['reason'])} participant(s)")
                return
            elif action == "practice":
                if not o["text"] or not o["accept"]:
                    raise CommandError("practice needs --text and --accept LOW HIGH")
                studies.add_practice_item(
                    study,
                    text=o["text"],
                    video_url=o["video_url"],
                    scale=o["scale"],
                    accept=o["accept"],
                    feedback=o["feedback"],
                )
            study.refresh_from_db()
            self.stdout.write(
                json.dumps(
                    {
                        "name": study.name,
                        "provider": study.provider,
                        "status": study.status,
                        "external_id": study.external_id,
                        "entry_url": studies.entry_url(study),
                        **studies.progress(study),
                    },
                    indent=2,
                )
            )
        except (
            studies.StudyError,
            ProlificError,
            TransientError,
            AdmissionRefused,
            ValueError,
            MissingCredential,
        ) as exc:
            raise CommandError(str(exc)) from None

    def _warn_unpublished(self, study):
        """On stderr (stdout keeps its lines for scripts): the study's links let nobody in yet, and how to publish."""
        warning = admission.links_warning(
            study, how_to_publish=f"python manage.py crowd_study publish --name {study.name}"
        )
        if warning:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
