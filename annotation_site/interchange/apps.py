from django.apps import AppConfig


class InterchangeConfig(AppConfig):
    name = "annotation_site.interchange"
    label = "interchange"
    verbose_name = "Dataset import and export"
