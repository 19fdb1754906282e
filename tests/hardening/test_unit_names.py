"""The short unique names of datasets, campaigns, projects and tasks hold at most 100 characters, on every
database. The name rule (``DATASET_NAME``) bounds the characters but not the length, which SQLite does not enforce
and PostgreSQL does: a 101-character name was a database error on PostgreSQL (a 500 or a traceback) from the
dataset import, ``da_plan``, ``da_import_judgments``, and stored on SQLite (issue #11)."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation_site.corpus.models import DATASET_NAME, NAME_LENGTH, Dataset, System, check_unit_name
from annotation_site.crowd import studies
from annotation_site.crowd.models import STUDY_NAME, Study
from annotation_site.crowd.studies import StudyError
from annotation_site.factuality import projects
from annotation_site.interchange import jsonl
from annotation_site.interchange.services import ImportRefused, import_bundle
from annotation_site.judgment_tasks import services as tasks
from assessment.models import Campaign
from metrics_eval.models import METRIC_NAME

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


@pytest.mark.parametrize("rule", [DATASET_NAME, STUDY_NAME, METRIC_NAME], ids=["dataset", "study", "metric"])
def test_each_name_rule_ends_at_the_end_of_the_text(rule):
    """``$`` also matches before a final line break: 'pilot\\n' passed the rules and was stored with it, a name
    nobody can type or find again."""
    rule("pilot-1")
    for name in ("pilot-1\n", "pilot-1\nx", "\npilot-1"):
        with pytest.raises(ValidationError):
            rule(name)


def test_a_dataset_campaign_or_study_named_with_a_final_line_break_is_refused(db):
    bundle = jsonl.read('{"type": "video", "video_id": "v1"}\n', filename="v.jsonl")
    with pytest.raises(ImportRefused, match="Use letters, digits"):
        import_bundle(bundle, name="demo\n", source_format="jsonl")
    assert not Dataset.objects.exists()

    make_dataset("named", n_videos=12)
    with pytest.raises(CommandError, match="Use letters, digits"):
        call_command("da_plan", "--campaign", "camp\n", "--dataset", "named", "--human-system", "human")
    assert not Campaign.objects.exists()

    call_command("da_plan", "--campaign", "camp", "--dataset", "named", "--human-system", "human", stdout=io.StringIO())
    with pytest.raises(StudyError, match="Use letters, digits"):
        studies.create_study("", "camp", name="panel\n", provider="link")
    assert not Study.objects.exists()
