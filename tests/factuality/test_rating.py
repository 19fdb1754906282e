"""Per-caption rating projects (VATEX-EVAL consistency, FIFA faithfulness): the configurable scale and
anchors, the optional / required rationale, and the report with Fleiss' kappa and pairwise Kendall / Spearman."""

import json
import uuid

import krippendorff
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from scipy import stats

from annotation_site.factuality import agreement, judgments, projects
from annotation_site.factuality.assignment import next_assignment, presented_captions
from annotation_site.factuality.models import CaptionRating, Project

from .conftest import by_system

pytestmark = pytest.mark.django_db

RATINGS = {  # annotator -> (video, system) -> rating
    "ann1": {
        ("v1", "Alpha"): 5,
        ("v1", "Beta"): 1,
        ("v1", "Gamma"): 2,
        ("v2", "Alpha"): 5,
        ("v2", "Beta"): 1,
        ("v2", "Gamma"): 3,
        ("v3", "Alpha"): 4,
        ("v3", "Beta"): 2,
        ("v3", "Gamma"): 5,
    },
    "ann2": {
        ("v1", "Alpha"): 4,
        ("v1", "Beta"): 1,
        ("v1", "Gamma"): 3,
        ("v2", "Alpha"): 5,
        ("v2", "Beta"): 2,
        ("v2", "Gamma"): 3,
        ("v3", "Alpha"): 5,
        ("v3", "Beta"): 1,
        ("v3", "Gamma"): 4,
    },
    "ann3": {
        ("v1", "Alpha"): 4,
        ("v1", "Beta"): 2,
        ("v1", "Gamma"): 2,
        ("v2", "Alpha"): 4,
        ("v2", "Beta"): 1,
        ("v2", "Gamma"): 4,
        ("v3", "Alpha"): 4,
        ("v3", "Beta"): 2,
        ("v3", "Gamma"): 5,
    },
}


def rate(project, annotator, rationale="looks right"):
    while (found := next_assignment(project, annotator)) is not None:
        presented = presented_captions(found)
        video = found.project_video.video.external_id
        order = by_system(presented)
        paragraphs = [None] * len(presented)
        for system, index in order.items():
            paragraphs[index] = {"score": RATINGS[annotator.user.username][(video, system)], "rationale": rationale}
        judgments.submit(found, presented, {"paragraphs": paragraphs}, client_uuid=uuid.uuid4())


def test_presets_scales_and_anchors(make_project):
    fifa = make_project(name="fifa", kind=Project.Kind.RATING, preset="fifa", rationale="optional")
    assert projects.scale_of(fifa)[0] == (1, "Completely hallucinated.")
    assert projects.scale_of(fifa)[-1] == (5, "Fully faithful.")
    assert fifa.question == "How faithful is the caption to the video?" and "faithful" in fifa.instructions
    custom = make_project(name="seven", kind=Project.Kind.RATING, scale=[(v, f"point {v}") for v in range(0, 7)])
    assert (custom.scale_min, custom.scale_max) == (0, 6)
    with pytest.raises(ValidationError):
        make_project(name="gappy", kind=Project.Kind.RATING, scale=[(1, "a"), (3, "b")])
    projects.update_project(fifa, anchors={3: "Half faithful."})
    assert projects.scale_of(fifa)[2] == (3, "Half faithful.")
    factuality = make_project(name="fact")
    projects.update_project(factuality, anchors={3: "changed"})  # ignored: the protocol's anchors are fixed
    assert projects.scale_of(factuality)[2][1] == "Some errors, but the consistent content is more."


def test_ratings_are_stored_with_rationales_and_checked(make_project, annotator_accounts):
    [annotator] = annotator_accounts(1)
    project = make_project(name="vatex", kind=Project.Kind.RATING, rationale="required", annotators=[annotator])
    found = next_assignment(project, annotator)
    presented = presented_captions(found)
    with pytest.raises(judgments.AnswerInvalid, match="give a short reason"):
        judgments.submit(found, presented, {"paragraphs": [{"score": 3}] * 3}, client_uuid=uuid.uuid4())
    with pytest.raises(judgments.AnswerInvalid, match="from 1 to 5, not 0"):
        judgments.submit(
            found, presented, {"paragraphs": [{"score": 0, "rationale": "r"}] * 3}, client_uuid=uuid.uuid4()
        )
    judgments.submit(
        found, presented, {"paragraphs": [{"score": 3, "rationale": " fine "}] * 3}, client_uuid=uuid.uuid4()
    )
    assert set(CaptionRating.objects.values_list("score", "rationale")) == {(3, "fine")}
    current = judgments.current_answer(found, presented)
    assert current["answer"]["paragraphs"][0] == {"score": 3, "rationale": "fine"}


def test_rating_report_adds_fleiss_kappa_and_rank_correlations(make_project, annotator_accounts):
    annotators = annotator_accounts(3)
    project = make_project(name="vatex", kind=Project.Kind.RATING, annotators=annotators)
    for annotator in annotators:
        rate(project, annotator)
    report = agreement.project_report(project)
    rating = report["rating"]
    keys = sorted(RATINGS["ann1"])
    matrix = [[RATINGS[a][k] for k in keys] for a in sorted(RATINGS)]
    assert rating["ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    )
    assert rating["interval"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    )
    pairs = [(0, 1), (0, 2), (1, 2)]
    assert rating["kendall_tau"] == pytest.approx(
        sum(stats.kendalltau(matrix[a], matrix[b]).statistic for a, b in pairs) / 3
    )
    assert rating["spearman_rho"] == pytest.approx(
        sum(stats.spearmanr(matrix[a], matrix[b]).statistic for a, b in pairs) / 3
    )
    assert (rating["pairs"], rating["fleiss_units"], rating["fleiss_raters"]) == (3, 9, 3)
    assert rating["fleiss_kappa"] is not None and -1 < rating["fleiss_kappa"] < 1
    systems = {row["system"]: row for row in report["systems"]}
    assert systems["Beta"]["counts"] == {1: 5, 2: 4, 3: 0, 4: 0, 5: 0}
    summary = agreement.command_summary(agreement.jsonable(report))
    assert list(summary) == ["rating"] and summary["rating"]["units"] == 9


def test_rating_pages_and_raw_export(staff_client, make_project, annotator_accounts):
    from django.test import Client

    annotators = annotator_accounts(3)
    project = make_project(name="vatex", kind=Project.Kind.RATING, rationale="optional", annotators=annotators)
    found = next_assignment(project, annotators[0])
    client = Client()
    client.force_login(annotators[0].user)
    page = client.get(reverse("factuality-annotate", args=[found.pk])).content.decode()
    assert "Caption A" in page and "Why this rating?" in page and "Completely consistent with the video." in page
    assert 'class="tok"' not in page  # no span marking in a rating task
    for annotator in annotators:
        rate(project, annotator)
    report = staff_client.get(reverse("factuality-report", args=["vatex"])).content.decode()
    assert "Fleiss" in report and "Kendall tau-b" in report and "Spearman" in report
    assert staff_client.get(reverse("factuality-chart", args=["vatex", "scores"])).status_code == 200
    raw = staff_client.get(reverse("factuality-export-raw", args=["vatex"])).content.decode().splitlines()
    assert len(raw) == 27
    assert list(json.loads(raw[0])) == ["video_id", "system", "annotator", "score", "rationale"]
    assert json.loads(raw[0])["rationale"] == "looks right"
    # uploaded back on its project page, the anonymised download is refused: its ratings are already here
    from django.core.files.uploadedfile import SimpleUploadedFile

    before = CaptionRating.objects.count()
    upload = SimpleUploadedFile("raw.jsonl", ("\n".join(raw) + "\n").encode())
    refused = staff_client.post(reverse("factuality-import-raw", args=["vatex"]), {"file": upload})
    assert refused.status_code == 400 and refused.content.decode().count('class="problem"') == 3
    assert "this looks like the project&#x27;s own anonymised download" in refused.content.decode()
    assert CaptionRating.objects.count() == before
