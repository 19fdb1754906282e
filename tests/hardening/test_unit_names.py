"""The short unique names of datasets, campaigns, projects and tasks hold at most 100 characters, on every
database. The name rule (``DATASET_NAME``) bounds the characters but not the length, which SQLite does not enforce
and PostgreSQL does: a 101-character name was a database error on PostgreSQL (a 500 or a traceback) from the
dataset import, ``da_plan``, ``da_import_judgments``, and stored on SQLite (issue #11)."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation_site.corpus.models import NAME_LENGTH, Dataset, System, check_unit_name
from annotation_site.factuality import projects
from annotation_site.interchange import jsonl
from annotation_site.interchange.services import ImportRefused, import_bundle
from annotation_site.judgment_tasks import services as tasks
from assessment.models import Campaign

from ..assessment.conftest import make_dataset

pytestmark = pytest.mark.django_db

LONG = "n" * (NAME_LENGTH + 1)


def test_the_rule_bounds_the_length():
    check_unit_name("n" * NAME_LENGTH)
    with pytest.raises(ValidationError, match="Use at most 100 characters"):
        check_unit_name(LONG)


def test_a_dataset_import_refuses_a_long_name(db):
    bundle = jsonl.read('{"type": "video", "video_id": "v1"}\n', filename="v.jsonl")
    with pytest.raises(ImportRefused, match="at most 100 characters"):
        import_bundle(bundle, name=LONG, source_format="jsonl")
    assert not Dataset.objects.exists()


def test_campaigns_projects_and_tasks_refuse_a_long_name(db, tmp_path):
    dataset = make_dataset("named", n_videos=12)
    with pytest.raises(CommandError, match="at most 100 characters"):
        call_command("da_plan", "--campaign", LONG, "--dataset", "named", "--human-system", "human")
    with pytest.raises(ValidationError, match="at most 100 characters"):
        projects.create_project(projects.ProjectSpec(name=LONG, dataset=dataset))
    with pytest.raises(ValidationError, match="at most 100 characters"):
        tasks.create_task(name=LONG, dataset=dataset, preset="fifa-faithfulness")
    judgments = tmp_path / "j.csv"
    judgments.write_text("worker_id,hit_id,item_id,system,video_id,item_type,control_of,score\nw,h,i,S,v,system,,5\n")
    with pytest.raises(CommandError, match="at most 100 characters"):
        call_command("da_import_judgments", "--campaign", LONG, str(judgments))
    assert not Campaign.objects.exists() and System.objects.filter(dataset__name=LONG).count() == 0
