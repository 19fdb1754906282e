from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "annotation_site.jobs"
    label = "jobs"
    verbose_name = "Background jobs"
