from django.apps import AppConfig


class FactualityConfig(AppConfig):
    name = "annotation_site.factuality"
    label = "factuality"
    verbose_name = "Factuality annotation"

    def ready(self):
        from annotation_site.corpus.protection import register_human_work

        from .models import Submission

        register_human_work(
            "factuality answers",
            Submission,
            export_hint="manage.py factuality_labels --project NAME --export FILE, or the project page's raw-labels "
            "download",
        )

        from annotation_site.crowd import adapters

        from .crowd_adapter import FactualityAdapter

        adapters.register(FactualityAdapter())  # crowd work reaches projects only through this adapter
