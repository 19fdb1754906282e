from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "annotation_site.demo"
    label = "demo"
    verbose_name = "Demo data"
