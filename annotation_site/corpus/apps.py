from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "annotation_site.corpus"
    label = "corpus"
    verbose_name = "Corpus"
