"""Three annotators complete a small project (through the services the pages call); the report gives alpha at
every level; the aggregate exports as factuality_annotation.json, which loads back through import_dataset
and exports again byte for byte."""

import io
import json

import krippendorff
import pytest
from django.core.management import call_command

from annotation_site.corpus.models import Dataset
from annotation_site.factuality import aggregation, agreement
from annotation_site.factuality.models import LabelSet
from annotation_site.interchange.services import project_factvc_text

from .conftest import PLANS

pytestmark = pytest.mark.django_db


def test_three_annotators_complete_the_project_and_the_report_has_alpha_per_level(completed, django_assert_num_queries):
    with django_assert_num_queries(4):  # one query per frame: paragraphs, sentences (with spans), tokens, captions
        report = agreement.project_report(completed)
    summary = agreement.command_summary(agreement.jsonable(report))
    assert summary["paragraph"]["units"] == 9 and summary["paragraph"]["annotators"] == 3
    assert summary["sentence"]["units"] == 15 and summary["word"]["units"] == 84
    for level, measures in (("paragraph", ("ordinal", "interval")), ("sentence", ("nominal",)), ("word", ("nominal",))):
        for measure in measures:
            assert 0.3 < summary[level][measure] < 1, (level, measure, summary[level][measure])
    assert all("fewer than 30" in w for w in report["paragraph"]["warnings"])  # 9 units: warned
    assert [round(row["sentence_agreement"], 2) for row in report["annotators"]] == [1.0, 0.8, 0.87]
    systems = {row["system"]: row for row in report["systems"]}
    assert systems["Beta"]["counts"] == {1: 5, 2: 4, 3: 0, 4: 0, 5: 0} and systems["Alpha"]["mean_score"] == 38 / 9


SENTENCES = {
    ("v1", "Alpha"): 2,
    ("v1", "Beta"): 1,
    ("v1", "Gamma"): 3,
    ("v2", "Alpha"): 2,
    ("v2", "Beta"): 1,
    ("v2", "Gamma"): 2,
    ("v3", "Alpha"): 1,
    ("v3", "Beta"): 2,
    ("v3", "Gamma"): 1,
}


def test_report_alphas_equal_the_package_on_matrices_built_from_the_plans(completed):
    """The whole path (pages' services -> database -> frames -> alpha) against krippendorff.alpha on the
    reliability matrices written down directly from what the annotators were told to answer."""
    names = sorted(PLANS)
    captions = sorted(SENTENCES)
    scores = [[PLANS[a][v][s][0] for v, s in captions] for a in names]
    flags = [[int(i in PLANS[a][v][s][1]) for v, s in captions for i in range(SENTENCES[(v, s)])] for a in names]
    summary = agreement.command_summary(agreement.jsonable(agreement.project_report(completed)))
    assert summary["paragraph"]["ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=scores, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    )
    assert summary["paragraph"]["interval"] == pytest.approx(
        krippendorff.alpha(reliability_data=scores, level_of_measurement="interval")
    )
    assert summary["sentence"]["nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=flags, level_of_measurement="nominal")
    )


def test_aggregate_export_import_export_is_byte_identical(completed, tmp_path):
    run = aggregation.write_label_set(completed, aggregation.aggregate_project(completed))
    assert (run.captions, run.sentences, run.errors_without_spans) == (9, 15, 0)
    first = tmp_path / "first" / "factuality_annotation.json"
    first.parent.mkdir()
    call_command(
        "export_dataset",
        "--format",
        "factvc",
        "--name",
        "small",
        "--labels",
        "anet-mini",
        "--out",
        str(first),
        stderr=io.StringIO(),
    )
    assert first.read_text() == project_factvc_text(completed)  # the download button gives the same bytes
    data = json.loads(first.read_text())
    assert data["v1"]["Alpha"] == {
        "paragraph_score": 4,
        "sentences": ["a man is cooking in a kitchen .", "he cuts [an onion] ."],
    }
    assert data["v1"]["Beta"]["sentences"] == ["a [woman] is riding [a horse] ."]
    assert data["v3"]["Gamma"]["paragraph_score"] == 5

    call_command(
        "import_dataset",
        "--format",
        "factvc",
        "--name",
        "reimported",
        "--no-youtube",
        str(first.parent),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    second = tmp_path / "second.json"
    call_command(
        "export_dataset", "--format", "factvc", "--name", "reimported", "--out", str(second), stderr=io.StringIO()
    )
    assert second.read_bytes() == first.read_bytes()
    assert LabelSet.objects.get(dataset=Dataset.objects.get(name="reimported")).origin == "imported"
