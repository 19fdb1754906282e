from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    """The dataset pages: browsing datasets and videos with their labels, import/export, video upload."""

    name = "annotation_site.datasets"
    label = "datasets"
    verbose_name = "Dataset pages"
