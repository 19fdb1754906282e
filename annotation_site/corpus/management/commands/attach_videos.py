from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation_site.corpus import attach
from annotation_site.corpus.models import Dataset


class Command(BaseCommand):
    help = (
        "Attach a folder of video files to a dataset's videos by id (v_ID.mp4 or ID.mp4), then probe them "
        "(duration, thumbnail) in a background job."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument("--name", required=True, help="Dataset name.")
        parser.add_argument("--replace", action="store_true", help="Also replace videos that already have a file.")
        parser.add_argument("--dry-run", action="store_true", help="Only show what would be attached.")

    def handle(self, *args, folder, name, replace, dry_run, **options):
        dataset = Dataset.objects.filter(name=name).first()
        if dataset is None:
            raise CommandError(f"no dataset named {name!r}")
        try:
            plan = attach.plan_attach(dataset, folder, replace=replace)
        except OSError as exc:
            raise CommandError(f"{folder}: {exc.strerror or exc}") from None
        if plan.ambiguous:
            lines = [f"{video_id}: {', '.join(p.name for p in paths)}" for video_id, paths in plan.ambiguous]
            raise CommandError("several files match these videos; keep one each:\n" + "\n".join(lines))
        self.stdout.write(
            f"{len(plan.matches)} files match, {len(plan.missing)} videos have no file, "
            f"{len(plan.unused)} files match no video"
        )
        for path in plan.unused[:20]:
            self.stderr.write(f"not a video of {name}: {path.name}")
        if dry_run or not plan.matches:
            return
        with tqdm(total=len(plan.matches), desc="copying", unit="video", file=self.stderr) as bar:
            updated = attach.attach(plan, progress=lambda video: bar.update(1))
        job = attach.start_processing(dataset, [v.pk for v in updated])
        job.refresh_from_db()
        self.stdout.write(
            self.style.SUCCESS(f"Attached {len(updated)} videos; processing job {job.pk}: {job.status} ({job.message})")
        )
