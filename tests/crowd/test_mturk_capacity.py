"""An MTurk results import into a factuality / rating project, a judgment task or a DA campaign that takes a unit
(a video, an item, a HIT) above its capacity (the project's annotators per video, the task's annotators per item,
the campaign's workers per HIT): it raised the unit's assigned count (a HIT's live assignments) without a word. The answers are still imported (they were collected; a full unit breaks
nothing), and the import names each such unit with file, line (the row of the first worker beyond the capacity)
and field ``WorkerId``: in the result's ``warnings`` (the API's answer), on the command's stderr and as warning
messages on the study page. An import within the capacity has none."""

import csv
import io
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.crowd import mturk_import
from annotation_site.crowd.models import Participation
from annotation_site.factuality import models as fact
from annotation_site.judgment_tasks.models import Item, Submission
from assessment.models import Assignment as DAAssignment
from assessment.models import Judgment

from ..assessment.conftest import make_dataset, small_campaign
from ..factuality.conftest import make_project, small_dataset  # noqa: F401  (fixtures)
from ..judgment_tasks.conftest import make_task, question_quality_items, videos  # noqa: F401  (fixtures)
from .conftest import study_of
from .test_da_adapter import mturk_study_of_first_hit

pytestmark = pytest.mark.django_db

TASK_HEADER = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.item_id"]
TASK_HEADER += ["Answer.matches"]
PROJECT_HEADER = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.video_id"]
PROJECT_HEADER += ["Answer.score_Beta"]


def _csv(header, rows):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _task_rows(*pairs):
    """A row per (AssignmentId, WorkerId, item key)."""
    return _csv(TASK_HEADER, [["3H" + item.upper(), a, w, "Submitted", "30", item, "[[0, 0]]"] for a, w, item in pairs])


def _project_rows(*pairs):
    """A row per (AssignmentId, WorkerId, video id)."""
    return _csv(PROJECT_HEADER, [["3V" + video.upper(), a, w, "Submitted", "30", video, "4"] for a, w, video in pairs])


def _video_warning(filename, line, annotators):
    return (
        f"{filename}, line {line}, field 'WorkerId': video 'v1' now has {annotators} annotators, more than the 2 "
        "annotators per video of project over: its answers were imported all the same, and the video is handed out "
        "to nobody else (raise the project's annotators per video if that is what the study is)"
    )


@pytest.fixture
def task(make_task):  # noqa: F811
    return make_task("crowd-quality", "fifa-question-quality", question_quality_items(3), per_item=2)


def test_a_task_import_above_the_annotators_per_item_says_so_and_keeps_the_answers(task):
    study = study_of("task", task, "quality-mturk", provider="mturk")
    first = mturk_import.import_results(study, _task_rows(("A1", "W1", "q0")), filename="first.csv")
    assert first == {"rows": 1, "created": 1, "unchanged": 0, "warnings": []}  # within the capacity: no word
    # q0 had one annotator: the file's second worker on q0 (line 4) is the first beyond its 2
    text = _task_rows(("A2", "W2", "q1"), ("A3", "W3", "q0"), ("A4", "W4", "q0"), ("A5", "W5", "q1"))
    result = mturk_import.import_results(study, text, filename="batch.csv")
    assert result == {
        "rows": 4,
        "created": 4,
        "unchanged": 0,
        "warnings": [
            "batch.csv, line 4, field 'WorkerId': item 'q0' now has 3 annotators, more than the 2 annotators per "
            "item of task crowd-quality: its answers were imported all the same, and the item is handed out to "
            "nobody else (raise the task's annotators per item if that is what the study is)"
        ],
    }
    assert dict(Item.objects.values_list("key", "assigned")) == {"q0": 3, "q1": 2, "q2": 0}  # q1: full, not above
    assert Submission.objects.count() == 5 and Participation.objects.count() == 5
    # the same file again: nothing new, nobody new above the capacity
    again = mturk_import.import_results(study, text, filename="batch.csv")
    assert again == {"rows": 4, "created": 0, "unchanged": 4, "warnings": []}


def test_a_project_import_above_the_annotators_per_video_warns_on_the_command_the_api_and_the_page(
    make_project,  # noqa: F811
    tmp_path,
    staff_client,
):
    project = make_project(
        name="over", kind=fact.Project.Kind.RATING, videos=["v1", "v2"], systems=["Beta"], annotators_per_video=2
    )
    study = study_of("factuality", project, "over-mturk", provider="mturk")
    path = tmp_path / "three.csv"
    path.write_text(_project_rows(("R1", "W1", "v1"), ("R2", "W2", "v2"), ("R3", "W3", "v1"), ("R4", "W4", "v1")))
    out, err = StringIO(), StringIO()
    call_command("crowd_mturk", "import", str(path), "--study", study.name, stdout=out, stderr=err)
    assert json.loads(out.getvalue()) == {
        "rows": 4,
        "created": 4,
        "unchanged": 0,
        "warnings": [_video_warning("three.csv", 5, 3)],
    }
    assert err.getvalue().strip() == "Warning: " + _video_warning("three.csv", 5, 3)
    assigned = dict(fact.ProjectVideo.objects.filter(project=project).values_list("video__external_id", "assigned"))
    assert assigned == {"v1": 3, "v2": 1} and fact.Submission.objects.count() == 4
    again = StringIO()
    call_command("crowd_mturk", "import", str(path), "--study", study.name, stdout=StringIO(), stderr=again)
    assert again.getvalue() == ""  # the same workers again: nobody new above the capacity
    api = staff_client.post(
        reverse("api-crowd-study-action", args=[study.name, "mturk-results"]),
        {"file": SimpleUploadedFile("d.csv", _project_rows(("R5", "W5", "v2"), ("R6", "W6", "v1")).encode())},
    )
    assert api.status_code == 200, api.content
    assert api.json()["warnings"] == [_video_warning("d.csv", 3, 4)]  # v2 reaches 2: full, no word
    page = staff_client.post(
        reverse("crowd-mturk-file", args=[study.name]),
        {"action": "import", "file": SimpleUploadedFile("e.csv", _project_rows(("R7", "W7", "v1")).encode())},
        follow=True,
    ).content.decode()
    assert "1 assignments read: 1 new, 0 already imported." in page
    assert "message--warning" in page and _video_warning("e.csv", 2, 5).replace("'", "&#x27;") in page
    assert fact.Submission.objects.count() == 7


def test_an_import_within_the_annotators_per_video_has_no_warnings(make_project, tmp_path, staff_client):  # noqa: F811
    project = make_project(
        name="within", kind=fact.Project.Kind.RATING, videos=["v1", "v2"], systems=["Beta"], annotators_per_video=2
    )
    study = study_of("factuality", project, "within-mturk", provider="mturk")
    path = tmp_path / "two.csv"
    path.write_text(_project_rows(("R1", "W1", "v1"), ("R2", "W2", "v1"), ("R3", "W1", "v2")))
    out, err = StringIO(), StringIO()
    call_command("crowd_mturk", "import", str(path), "--study", study.name, stdout=out, stderr=err)
    assert json.loads(out.getvalue())["warnings"] == [] and err.getvalue() == ""
    page = staff_client.post(
        reverse("crowd-mturk-file", args=[study.name]),
        {"action": "import", "file": SimpleUploadedFile("f.csv", _project_rows(("R4", "W4", "v2")).encode())},
        follow=True,
    ).content.decode()
    assert "1 assignments read: 1 new" in page and "message--warning" not in page
    assigned = dict(fact.ProjectVideo.objects.filter(project=project).values_list("video__external_id", "assigned"))
    assert assigned == {"v1": 2, "v2": 2}


def test_the_warnings_cost_one_query_whatever_the_number_of_units_above(make_task):  # noqa: F811
    """The same file into a task of 1 annotator per item (two items go above) and one of 3 (none does): the same
    number of queries, so finding the units above is one query, not one per unit."""
    counts, warnings = {}, {}
    for per_item in (1, 3):
        task = make_task(f"cap-{per_item}", "fifa-question-quality", question_quality_items(2), per_item=per_item)
        study = study_of("task", task, f"cap-{per_item}-mturk", provider="mturk")
        a, w = f"P{per_item}A", f"P{per_item}W"  # assignments and workers of their own per study
        text = _task_rows(*[(f"{a}{n}", f"{w}{n % 2}", f"q{n // 3}") for n in (1, 2, 3, 4)])
        with CaptureQueriesContext(connection) as queries:
            warnings[per_item] = mturk_import.import_results(study, text, filename="c.csv")["warnings"]
        counts[per_item] = len(queries)
    assert [w.split(" now has")[0] for w in warnings[1]] == [
        "c.csv, line 3, field 'WorkerId': item 'q0'",
        "c.csv, line 5, field 'WorkerId': item 'q1'",
    ]
    assert warnings[3] == [] and counts[1] == counts[3]


def test_a_da_import_above_the_workers_per_hit_says_so_and_keeps_the_judgments(tmp_path):
    """A HIT's place count is its live assignments (the hand-out gives it to nobody once they reach the workers per
    HIT): a results file with three workers on a HIT of two keeps all three's judgments and names the HIT."""
    dataset = make_dataset("da-over", n_videos=12)
    campaign = small_campaign(
        dataset, "da-over", pairs_per_hit=5, repeats_per_hit=2, min_control_distance=4, workers_per_hit=2
    )
    study, hit_id, positions, header = mturk_study_of_first_hit(campaign, "da-over-mturk")
    hit = campaign.hits.order_by("number").first()

    def results(*pairs):
        return _csv(header, [["3HIT", a, w, "Submitted", "60", hit_id] + ["50"] * len(positions) for a, w in pairs])

    first = mturk_import.import_results(study, results(("D1", "W1"), ("D2", "W2")), filename="two.csv")
    assert first["created"] == 2 and first["warnings"] == []  # the HIT is full, not above
    path = tmp_path / "three.csv"
    path.write_text(results(("D3", "W3"), ("D4", "W4")))
    out, err = StringIO(), StringIO()
    call_command("crowd_mturk", "import", str(path), "--study", study.name, stdout=out, stderr=err)
    label = hit.external_id or str(hit.number)
    warning = (
        f"three.csv, line 2, field 'WorkerId': HIT {label!r} now has 4 workers, more than the 2 workers per HIT of "
        "campaign da-over: its judgments were imported all the same, and the HIT is handed out to nobody else "
        "(raise the campaign's workers per HIT if that is what the study is)"
    )
    assert json.loads(out.getvalue())["warnings"] == [warning]
    assert err.getvalue().strip() == f"Warning: {warning}"
    assert DAAssignment.objects.filter(hit=hit).count() == 4
    assert Judgment.objects.filter(assignment__hit=hit).count() == 4 * len(positions)
    again = StringIO()
    call_command("crowd_mturk", "import", str(path), "--study", study.name, stdout=StringIO(), stderr=again)
    assert again.getvalue() == ""  # the same workers again: nobody new above the capacity
