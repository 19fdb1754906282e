from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "annotation_site.corpus"
    label = "corpus"
    verbose_name = "Corpus"

    def ready(self):
        from annotation_site import sqlite_wal

        sqlite_wal.connect()
