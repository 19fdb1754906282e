from django.apps import AppConfig


class AssessmentConfig(AppConfig):
    """Direct Assessment (Graham, Awad & Smeaton 2018): 0-100 slider HITs with hidden quality control."""

    name = "assessment"
    verbose_name = "Direct Assessment"

    def ready(self):
        from annotation_site.corpus.protection import register_human_work

        from .models import Judgment

        register_human_work(
            "DA judgments",
            Judgment,
            export_hint="the campaign page's judgments.csv download (/da/campaigns/NAME/judgments.csv)",
        )

        from annotation_site.crowd import adapters

        from .crowd_adapter import DirectAssessmentAdapter

        adapters.register(DirectAssessmentAdapter())  # crowd work reaches campaigns only through this adapter
