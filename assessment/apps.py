from django.apps import AppConfig


class AssessmentConfig(AppConfig):
    """Direct Assessment (Graham, Awad & Smeaton 2018): 0-100 slider HITs with hidden quality control."""

    name = "assessment"
    verbose_name = "Direct Assessment"
