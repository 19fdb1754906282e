from django.apps import AppConfig


class JudgmentTasksConfig(AppConfig):
    name = "annotation_site.judgment_tasks"
    label = "judgment_tasks"
    verbose_name = "Judgment tasks"

    def ready(self):
        from annotation_site.corpus.protection import register_human_work

        from .models import Submission

        register_human_work(
            "judgment-task answers",
            Submission,
            export_hint="the task page's answers.jsonl download (/tasks/t/NAME/download/answers.jsonl)",
        )

        from annotation_site.crowd import adapters

        from .crowd_adapter import JudgmentTaskAdapter

        adapters.register(JudgmentTaskAdapter())  # crowd work reaches tasks only through this adapter
