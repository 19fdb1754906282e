from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation_site.command_options import column
from annotation_site.corpus.models import Dataset
from annotation_site.factuality import aggregation, projects, protocol
from annotation_site.factuality.models import Project
from annotation_site.links import absolute_url


class Command(BaseCommand):
    help = (
        "Manage factuality projects: create, invite annotators (their links are printed while their account "
        "is not activated), reissue a lost invitation link, aggregate into a label set, close / reopen. "
        "Examples: factuality_project create --name p1 --dataset anet --annotators alice bob carol; "
        "factuality_project reissue --name p1 --annotators bob; factuality_project aggregate --name p1"
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["create", "invite", "reissue", "aggregate", "close", "reopen"])
        parser.add_argument("--name", required=True, help="Project name.")
        parser.add_argument("--dataset", help="create: the dataset.")
        parser.add_argument("--kind", choices=Project.Kind.values, default=Project.Kind.FACTUALITY)
        parser.add_argument(
            "--systems",
            nargs="*",
            help="create: system names (default: every system that is not human; a human caption "
            "set is judged only when named here).",
        )
        parser.add_argument("--videos", nargs="*", help="create: video ids (default: all with captions).")
        parser.add_argument(
            "--per-video",
            type=column(Project, "annotators_per_video"),
            default=3,
            help="create: annotators per video (default 3).",
        )
        parser.add_argument("--no-shuffle", action="store_true", help="create: keep the system order.")
        parser.add_argument(
            "--preset", choices=list(protocol.RATING_PRESETS), default="", help="create, rating: the scale."
        )
        parser.add_argument("--rationale", choices=Project.Rationale.values, default=Project.Rationale.OFF)
        parser.add_argument("--annotators", nargs="*", default=[], help="create / invite / reissue: user names.")
        parser.add_argument("--ties", choices=aggregation.TIES, default="error", help="aggregate: tie rule.")
        parser.add_argument(
            "--base-url",
            default=None,
            help="The platform's public address for invitation links (default: the "
            "CAPTIONEVAL_BASE_URL setting, http://127.0.0.1:8000 unless configured).",
        )

    def handle(self, *args, action, name, **o):
        try:
            if action == "create":
                dataset = Dataset.objects.filter(name=o["dataset"] or "").first()
                if dataset is None:
                    raise CommandError("create needs --dataset NAME of an existing dataset")
                project = projects.create_project(
                    projects.ProjectSpec(
                        name=name,
                        dataset=dataset,
                        kind=o["kind"],
                        systems=o["systems"] or None,
                        videos=o["videos"] or None,
                        annotators_per_video=o["per_video"],
                        shuffle_systems=not o["no_shuffle"],
                        preset=o["preset"],
                        rationale=o["rationale"],
                    )
                )
                self.stdout.write(
                    f"Created project {project.name}: {project.project_videos.count()} videos, "
                    f"{project.systems.count()} systems"
                )
                left_out = dataset.systems.filter(is_human=True).exclude(pk__in=project.systems.all())
                if left_out.exists():
                    self.stdout.write(
                        "Human caption sets not included (name them with --systems to judge them): "
                        + ", ".join(left_out.values_list("name", flat=True))
                    )
                self._invite(project, o["annotators"], o["base_url"])
                return
            project = Project.objects.filter(name=name).first()
            if project is None:
                raise CommandError(f"no project named {name!r}")
            if action == "invite":
                self._invite(project, o["annotators"], o["base_url"])
            elif action == "reissue":
                if not o["annotators"]:
                    raise CommandError("reissue needs --annotators USERNAME ...")
                for username in o["annotators"]:
                    path = projects.reissue_invitation(project, username)
                    self.stdout.write(
                        f"New invitation link for {username} (the earlier one no longer works): "
                        f"{absolute_url(path, o['base_url'])}"
                    )
            elif action == "aggregate":
                run = aggregation.write_label_set(project, aggregation.aggregate_project(project, ties=o["ties"]))
                self.stdout.write(
                    f"Label set {run.label_set.name!r}: {run.captions} captions, {run.sentences} "
                    f"sentences, {run.spans} spans (ties: {run.ties})"
                )
                if run.errors_without_spans:
                    self.stderr.write(
                        f"warning: {run.errors_without_spans} sentences are erroneous by majority "
                        "without a word marked by a majority (the FactVC format cannot show them)"
                    )
            else:
                projects.set_status(project, Project.Status.CLOSED if action == "close" else Project.Status.OPEN)
                self.stdout.write(f"Project {project.name} is {project.status}")
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        except aggregation.LabelSetNameTaken as exc:
            raise CommandError(str(exc)) from None

    def _invite(self, project, usernames, base_url):
        for username in usernames:
            invited = projects.invite_to_project(project, username)
            if invited.needs_link:
                what = "new account" if invited.created_account else "not activated yet"
                self.stdout.write(f"Invited {username} ({what}): {absolute_url(invited.link_path, base_url)}")
            else:
                self.stdout.write(f"Invited {username} (active account: they log in)")
