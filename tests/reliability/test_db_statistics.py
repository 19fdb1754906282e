"""annotation_site.db_statistics: the bulk loads participants' work is read from (a dataset import, a campaign's
plan, a project's videos, a task's items) leave the planner statistics of the tables they filled describing
those rows once they commit, so that PostgreSQL does not plan the first minute of a study for empty tables
(docs/reliability.md, "Planner statistics after a bulk load"). Both test passes: on PostgreSQL the tables are
analysed once the load commits (``pg_class.reltuples`` becomes the table's row count, which only ANALYZE or
VACUUM sets), on SQLite nothing is scheduled."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def planner_rows(model):
    """What the planner believes ``model``'s table holds (PostgreSQL's pg_class.reltuples; -1: never analysed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table])
        return cursor.fetchone()[0]


def test_the_tables_of_every_bulk_load_are_analysed_once_it_commits(django_capture_on_commit_callbacks):
    from annotation_site.corpus.models import Caption, Sentence, System, Video
    from annotation_site.factuality.models import ProjectVideo
    from annotation_site.judgment_tasks.models import Item as TaskItem
    from assessment.models import HIT, Item
    from tests.security.world import World

    loaded = (System, Video, Caption, Sentence, HIT, Item, ProjectVideo, TaskItem)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        World()  # imports the demo dataset, plans its campaign, makes its project, imports a task's items
    analyses = [c for c in pending if c.__qualname__ == "refresh_after_bulk_load.<locals>.analyse"]
    if connection.vendor != "postgresql":
        assert analyses == []
        return
    before = {model: planner_rows(model) for model in loaded}
    assert any(before[model] != model.objects.count() for model in loaded)  # what autovacuum would not know yet
    for analyse in analyses:  # what the commit would run
        analyse()
    assert {model.__name__: planner_rows(model) for model in loaded} == {
        model.__name__: model.objects.count() for model in loaded
    }


def test_a_failing_analyse_does_not_fail_the_load_that_committed(django_capture_on_commit_callbacks, caplog):
    """The load has committed when the tables are analysed: an error there (here: a table that is gone) is
    logged, and the caller gets its result, not an exception."""
    from django.db import transaction

    from annotation_site.corpus.models import Video
    from annotation_site.db_statistics import refresh_after_bulk_load

    if connection.vendor != "postgresql":
        with django_capture_on_commit_callbacks() as pending:
            refresh_after_bulk_load(Video)
        assert pending == []
        return

    class Gone:
        class _meta:
            db_table = "no_such_table_here"

    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            refresh_after_bulk_load(Gone)
    assert "no_such_table_here" in caplog.text
