import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation_site import safe_json
from annotation_site.annotators.services import invitation_path
from annotation_site.command_options import column, whole_number
from annotation_site.corpus.models import Dataset
from annotation_site.judgment_tasks import participants, presets, services
from annotation_site.judgment_tasks.models import Task
from annotation_site.links import absolute_url


class Command(BaseCommand):
    help = (
        "Manage judgment tasks: create from a preset or a definition file, show or replace the definition "
        "(until work starts), add annotators, make participant links, close / reopen. Examples: "
        "judgment_task create --name qq --dataset fifa --preset fifa-question-quality --annotators a b c; "
        "judgment_task define --name qq --definition def.json; judgment_task presets"
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "action", choices=["create", "show", "define", "invite", "participant", "close", "reopen", "presets"]
        )
        parser.add_argument("--name", help="Task name.")
        parser.add_argument("--dataset", help="create: the dataset whose videos the items show.")
        parser.add_argument("--preset", choices=list(presets.PRESETS), help="create: start from this preset.")
        parser.add_argument("--definition", help="create / define: a JSON definition file (see docs/tasks.md).")
        parser.add_argument(
            "--per-item",
            type=column(Task, "annotators_per_item"),
            default=3,
            help="create: annotators per item (default 3).",
        )
        parser.add_argument("--annotators", nargs="*", default=[], help="create / invite: user names.")
        parser.add_argument("--provider", default="link", help="participant: where the participant comes from.")
        parser.add_argument("--participant", help="participant: the participant's id at the provider.")
        parser.add_argument(
            "--limit", type=whole_number(1, participants.MAX_LIMIT), help="participant: items they may take."
        )
        parser.add_argument("--finish-url", default="", help="participant: where they go when done.")
        parser.add_argument(
            "--base-url",
            default=None,
            help="The platform's public address that printed links start with (default: CAPTIONEVAL_BASE_URL).",
        )

    def handle(self, *args, action, **o):
        if action == "presets":
            for key, preset in presets.PRESETS.items():
                self.stdout.write(f"{key}: {preset['label']}")
            return
        if not o["name"]:
            raise CommandError(f"{action} needs --name")
        try:
            if action == "create":
                self._create(o)
                return
            task = Task.objects.filter(name=o["name"]).first()
            if task is None:
                raise CommandError(f"no task named {o['name']!r}")
            if action == "show":
                self.stdout.write(json.dumps(task.definition, indent=2))
            elif action == "define":
                services.update_definition(task, self._definition(o))
                self.stdout.write(f"Task {task.name}: definition replaced")
            elif action == "invite":
                self._invite(task, o["annotators"], o["base_url"])
            elif action == "participant":
                if not o["participant"]:
                    raise CommandError("participant needs --participant ID")
                annotator = participants.admit(task, provider=o["provider"], external_id=o["participant"])
                self.stdout.write(
                    absolute_url(
                        participants.entry_url(task, annotator, limit=o["limit"], finish_url=o["finish_url"]),
                        o["base_url"],
                    )
                )
            else:
                services.set_status(task, Task.Status.CLOSED if action == "close" else Task.Status.OPEN)
                self.stdout.write(f"Task {task.name} is {task.status}")
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _definition(self, o):
        if not o["definition"]:
            raise CommandError("give --definition FILE")
        try:
            return safe_json.loads(Path(o["definition"]).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"{o['definition']}: {exc}") from None

    def _create(self, o):
        dataset = Dataset.objects.filter(name=o["dataset"] or "").first()
        if dataset is None:
            raise CommandError("create needs --dataset NAME of an existing dataset")
        definition = self._definition(o) if o["definition"] else None
        task = services.create_task(
            name=o["name"],
            dataset=dataset,
            preset=o["preset"] or "",
            definition=definition,
            annotators_per_item=o["per_item"],
        )
        self.stdout.write(
            f"Created task {task.name} ({task.preset or 'custom definition'}); next: task_import "
            f"--task {task.name} --items FILE.jsonl"
        )
        self._invite(task, o["annotators"], o["base_url"])

    def _invite(self, task, usernames, base_url):
        for username in usernames:
            invited = services.invite_to_task(task, username)
            if invited.created_account:
                self.stdout.write(
                    f"Added {username} (new account): {absolute_url(invitation_path(invited.annotator.user), base_url)}"
                )
            else:
                self.stdout.write(f"Added {username}")
