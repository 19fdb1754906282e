from django.apps import AppConfig


class FactualityConfig(AppConfig):
    name = "annotation_site.factuality"
    label = "factuality"
    verbose_name = "Factuality annotation"
