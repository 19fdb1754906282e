from django.apps import AppConfig


class AnnotatorsConfig(AppConfig):
    """Who judges: staff, invited annotators and crowd workers, with their external ids."""

    name = "annotation_site.annotators"
    label = "annotators"
    verbose_name = "Annotators"
