"""The demo shows every part of the platform working (issue #9, item 5): load_demo adds a factuality project
answered by simulated annotators (with an agreement report) and a DA campaign rated by a simulated crowd (with
QC, a ranking with the hidden human system, the win matrix); da_plan with its defaults works on the demo
dataset. The demo steps are run by annotation_site.demo, above the apps (the corpus never imports them)."""

import io
import json
import time

import pytest
from django.core.management import call_command

from annotation_site.demo import services as demo
from annotation_site.factuality.models import Project, Submission
from annotation_site.interchange.services import import_bundle
from assessment.models import Campaign, QCResult, Worker

pytestmark = pytest.mark.django_db


def demo_dataset(n_videos=4):
    """The demo dataset's content without its video files (the steps need no files)."""
    return import_bundle(
        demo.build_bundle(demo.demo_videos(n_videos)),
        name=demo.DEMO_NAME,
        source_format="demo",
        label_set_name=demo.LABEL_SET,
    ).dataset


def run_steps(dataset):
    return [f"{step.name}: {step.run(dataset, None)}" for step in demo.demo_steps()]


def test_the_demo_runs_the_factuality_then_the_assessment_step():
    assert [step.name for step in demo.demo_steps()] == ["factuality", "direct assessment"]


def test_the_steps_fill_a_factuality_project_and_a_da_campaign_quickly(staff_client):
    dataset = demo_dataset()
    started = time.perf_counter()
    notes = run_steps(dataset)
    assert time.perf_counter() - started < 10  # generous: about a second on the project machine
    assert notes[0].startswith("factuality: project 'demo-factuality': 12 answers by 3 simulated annotators")
    assert notes[1].startswith("direct assessment: campaign 'demo-da':")

    project = Project.objects.get(name="demo-factuality")
    assert sorted(project.systems.values_list("name", flat=True)) == ["ClipTrans", "FrameLSTM", "RetrievalBaseline"]
    assert Submission.objects.filter(assignment__project=project, is_current=True).count() == 12
    out = io.StringIO()
    call_command(
        "factuality_agreement", "--project", "demo-factuality", "--format", "json", stdout=out, stderr=io.StringIO()
    )
    agreement = json.loads(out.getvalue())
    assert agreement["paragraph"]["annotators"] == 3 and 0.3 < agreement["paragraph"]["ordinal"] <= 1
    report = staff_client.get("/factuality/projects/demo-factuality/report/")
    assert report.status_code == 200 and b'data-level="paragraph"' in report.content

    campaign = Campaign.objects.get(name="demo-da")
    assert campaign.human_system.name == "gt_demo" and campaign.human_system.is_human
    out = io.StringIO()
    call_command("da_report", campaign="demo-da", format="json", stdout=out)
    result = json.loads(out.getvalue())
    ranked = [s["system"] for s in result["systems"]]
    assert ranked == ["gt_demo", "ClipTrans", "FrameLSTM", "RetrievalBaseline"]  # the simulated qualities' order
    assert [s["is_human"] for s in result["systems"]] == [True, False, False, False]
    assert result["wins"] and {w["status"] for w in result["workers"]} == {"passed", "failed"}
    assert QCResult.objects.filter(campaign=campaign).count() == len(result["workers"])
    page = staff_client.get("/da/campaigns/demo-da/").content.decode()
    assert 'id="win-matrix"' in page and "gt_demo" in page and 'class="badge">human' in page


def test_da_plan_with_its_defaults_works_on_the_demo_dataset():
    demo_dataset()
    out = io.StringIO()
    call_command("da_plan", campaign="mine", dataset="demo", reference_set="gt_demo", stdout=out)
    campaign = Campaign.objects.get(name="mine")
    assert campaign.hits.count() * campaign.pairs_per_hit >= campaign.qc_min_pairs
    assert "a worker needs" in out.getvalue()


def test_steps_explain_why_they_cannot_run_on_a_one_video_demo():
    dataset = demo_dataset(n_videos=1)
    notes = run_steps(dataset)
    assert notes[0].startswith("factuality: project 'demo-factuality'")
    assert notes[1].startswith("direct assessment: skipped:") and "degraded" in notes[1]
    assert not Campaign.objects.exists()


def test_replacing_the_demo_replaces_its_simulated_crowd():
    run_steps(demo_dataset())
    workers = set(Worker.objects.values_list("external_id", flat=True))
    from annotation_site.corpus.models import Dataset

    Dataset.objects.filter(name="demo").delete()  # what load_demo --replace does first
    run_steps(demo_dataset())  # the workers' ids are free again: no IntegrityError
    assert set(Worker.objects.values_list("external_id", flat=True)) == workers


def test_load_demo_prints_what_each_step_made():
    out = io.StringIO()
    call_command("load_demo", "--videos", "2", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    assert "factuality: project 'demo-factuality'" in text and "direct assessment: campaign 'demo-da'" in text
