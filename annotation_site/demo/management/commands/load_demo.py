"""``manage.py load_demo``: the demo dataset (see ``annotation_site.demo.services``) and, optionally, a login."""

from django.core.management.base import BaseCommand, CommandError

from annotation_site.command_options import whole_number
from annotation_site.demo import services as demo
from annotation_site.interchange.services import ImportRefused


class Command(BaseCommand):
    help = (
        f"Create the dataset {demo.DEMO_NAME!r}: generated test-pattern videos (stored and probed), captions of "
        "three made-up systems, human references and factuality labels; then the apps' demo steps: a factuality "
        "project with simulated annotators (agreement report) and a Direct Assessment campaign with a simulated "
        "crowd (QC, rankings). An existing demo dataset is left alone unless --replace is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--replace", action="store_true", help="Delete and recreate an existing demo dataset.")
        parser.add_argument(
            "--videos", type=whole_number(1, 50), default=4, help="Number of videos (1 to 50; default 4)."
        )
        parser.add_argument("--user", help="Also create (or update) this staff superuser, to log in with.")
        parser.add_argument("--password", help="Password of --user.")

    def handle(self, *args, replace, videos, user, password, **options):
        if bool(user) != bool(password):
            raise CommandError("--user and --password go together")

        def progress(done, total, message):
            self.stdout.write(f"[{done}/{total}] {message}")

        try:
            result = demo.load_demo(n_videos=videos, replace=replace, progress=progress)
        except ImportRefused as exc:  # another process created it meanwhile
            raise CommandError(str(exc)) from None
        counts = ", ".join(f"{n} {what}" for what, n in result.counts.items())
        if result.created:
            self.stdout.write(self.style.SUCCESS(f"Created dataset {demo.DEMO_NAME!r}: {counts}"))
            for note in result.notes:
                self.stdout.write(note)
        else:
            self.stdout.write(
                f"Dataset {demo.DEMO_NAME!r} already exists ({counts}); left unchanged (use --replace to recreate it)."
            )
        if user:
            _, created = demo.ensure_superuser(user, password)
            self.stdout.write(
                self.style.SUCCESS(
                    f"{'Created' if created else 'Updated'} staff superuser {user!r}; log in at /admin/ or /accounts/login/."
                )
            )
