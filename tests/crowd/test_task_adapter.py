"""Configurable judgment tasks plugged into crowd work like DA and factuality: a task published on the
signed-link provider and on Prolific (fake server) with the same one signed-link mechanism; a participant
takes an item (Start), answers it on the task's page by its token, and ends on the crowd's end page (code, or
Prolific's completion URL); payments know tasks have no hidden QC; MTurk batch results come in as task answers
(validated whole, one transaction, idempotent) and as factuality / rating project answers."""

import csv
import io
import uuid

import pytest
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.crowd import adapters, links, mturk_formats, mturk_import, payments, studies
from annotation_site.crowd.models import Participation
from annotation_site.factuality import models as fact
from annotation_site.judgment_tasks.models import Assignment, Item, Submission

from ..factuality.conftest import make_project, small_dataset  # noqa: F401  (fixtures)
from ..judgment_tasks.conftest import make_task, question_quality_items, videos  # noqa: F401  (fixtures)
from .conftest import link_study, payments_dry_run, start_by_link, study_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(make_task):  # noqa: F811
    return make_task("crowd-quality", "fifa-question-quality", question_quality_items(3), per_item=2)


def test_the_adapter_describes_a_task_and_its_items(task):
    adapter, target = adapters.resolve("task", "crowd-quality")
    described = adapter.describe(target)
    assert [u.label for u in described.units] == ["q0", "q1", "q2"]
    assert {u.capacity for u in described.units} == {2} and adapter.capacity(target) == 6
    assert adapters.find_target("crowd-quality")[0] is adapter
    study = studies.create_study("", "crowd-quality", name="quality-panel", provider="link")
    assert (study.protocol, study.object_id) == ("task", task.pk)


def test_a_link_participant_answers_an_item_and_ends_with_a_code(client, task):
    study = link_study("task", task, "quality-panel")
    token, started = start_by_link(client, study, {"pid": "tia"})
    assert started.status_code == 302 and started["Location"].startswith("/tasks/p/")
    task_token = started["Location"].split("/")[3]
    item_page = client.get(started["Location"])
    assert item_page.status_code == 200 and item_page["Content-Security-Policy"].startswith("frame-ancestors")
    found = Assignment.objects.get()
    assert found.annotator.external_id == "link:quality-panel:tia" and found.annotator.kind == "crowd"
    submitted = client.post(
        reverse("api-tasks-submit", args=[found.pk]),
        {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[0, 0]]}},
        content_type="application/json",
        HTTP_X_PARTICIPANT_TOKEN=task_token,
    )
    assert submitted.status_code == 201, submitted.content
    # the page's "next" stops at the crowd's slot: no second item, straight on to the crowd's end page
    following = client.post(reverse("tasks-participant-next", args=[task_token]))
    assert following["Location"] == reverse("tasks-participant-done", args=[task_token])
    assert Assignment.objects.count() == 1
    done = client.get(following["Location"])
    assert done["Location"] == reverse("crowd-finish", args=[token]) or links.participation_id_from_token(
        done["Location"].split("/")[3]
    ) == links.participation_id_from_token(token)
    ended = client.get(done["Location"])
    participation = Participation.objects.get()
    assert participation.status == "completed"
    code = links.completion_code(study.pk, participation.work_key, "link:quality-panel:tia")
    assert code.encode() in ended.content
    again = client.post(reverse("crowd-start", args=[token]))
    assert again.status_code in (302, 409) and Assignment.objects.count() == 1
    # payments: no hidden QC in tasks
    [decision] = payments_dry_run("crowd-quality", "approve-passing")["decisions"]
    assert (decision["action"], decision["hit_id"], decision["qc"]["status"]) == ("review", "q0", "insufficient_data")


def test_a_prolific_participant_reaches_prolific_completion_url(client, task, fake_prolific, settings):
    settings.PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete"
    study = studies.create_study(
        "task", "crowd-quality", name="quality-prolific", provider="prolific", completion_code="C7Q2ZK9P", reward="0.40"
    )
    study = studies.publish(study)
    assert study.places == 6 and fake_prolific.studies[study.external_id]["total_available_places"] == 6
    pid = "5f" + "4" * 22
    session = fake_prolific.add_submission(study.external_id, pid)
    token, started = start_by_link(
        client, study, {"PROLIFIC_PID": pid, "STUDY_ID": study.external_id, "SESSION_ID": session}
    )
    task_token = started["Location"].split("/")[3]
    found = Assignment.objects.get()
    assert (
        client.post(
            reverse("api-tasks-submit", args=[found.pk]),
            {"submission_uuid": str(uuid.uuid4()), "answer": {"matches": [[1, 1]]}},
            content_type="application/json",
            HTTP_X_PARTICIPANT_TOKEN=task_token,
        ).status_code
        == 201
    )
    done = client.get(reverse("tasks-participant-done", args=[task_token]))
    ended = client.get(done["Location"])
    assert b"https://app.prolific.com/submissions/complete?cc=C7Q2ZK9P" in ended.content
    assert Participation.objects.get().status == "completed"


# The columns of an MTurk results file of the task's batch
RESULTS_HEADER = [
    "HITId",
    "AssignmentId",
    "WorkerId",
    "AssignmentStatus",
    "WorkTimeInSeconds",
    "Input.hit_id",
    "Input.item_id",
    "Answer.matches",
    "Approve",
    "Reject",
]


def _results(rows, header):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def test_mturk_results_come_in_as_task_answers_once(task):
    study = study_of("task", task, "quality-mturk", provider="mturk")
    batch, _ = studies.mturk_batch(study)
    hits = list(csv.DictReader(io.StringIO(batch)))
    assert [h["hit_label"] for h in hits] == ["q0", "q1", "q2"]
    header = RESULTS_HEADER
    text = _results(
        [
            ["3H0", "A1", "W1", "Submitted", "61", hits[0]["hit_id"], "", "[[0, 0], [1, 1]]", "", ""],
            ["3H0", "A2", "W2", "Submitted", "75", hits[0]["hit_id"], "", "[[0, 1]]", "", ""],
            ["3H1", "A3", "W1", "Submitted", "40", "", "q1", "[]", "", ""],  # left empty: stored as incomplete
        ],
        header,
    )
    assert mturk_import.import_results(study, text) == {"rows": 3, "created": 3, "unchanged": 0, "warnings": []}
    answers = {
        s.assignment.item.key + "/" + s.annotator.external_id: (s.answers, s.source, s.confirmed_incomplete)
        for s in Submission.objects.select_related("assignment__item", "annotator")
    }
    assert answers == {
        "q0/mturk:W1": ({"matches": [[0, 0], [1, 1]]}, "import", False),
        "q0/mturk:W2": ({"matches": [[0, 1]]}, "import", False),
        "q1/mturk:W1": ({"matches": []}, "import", True),
    }
    assert dict(Item.objects.values_list("key", "assigned")) == {"q0": 2, "q1": 1, "q2": 0}
    # importing the same file again changes nothing
    assert mturk_import.import_results(study, text) == {"rows": 3, "created": 0, "unchanged": 3, "warnings": []}
    assert Submission.objects.count() == 3 and Assignment.objects.count() == 3
    assert Annotator.objects.filter(kind="crowd", external_id__startswith="mturk:").count() == 2
    # decisions and the Approve/Reject file
    adapter, target = adapters.resolve("task", task.name)
    payments.record(target, payments.preview(adapter, target, policy="approve-all"), policy="approve-all")
    upload = {
        r["AssignmentId"]: r["Approve"]
        for r in csv.DictReader(io.StringIO(mturk_import.approve_reject_file(study, text)))
    }
    assert upload == {"A1": "x", "A2": "x", "A3": "x"}


def test_a_malformed_task_results_file_is_refused_whole_with_its_lines(task):
    study = study_of("task", task, "quality-mturk", provider="mturk")
    header = [c for c in RESULTS_HEADER if c != "Input.hit_id"]
    text = _results(
        [
            ["3H0", "B1", "W1", "Submitted", "61", "q0", "[[0, 0]]", "", ""],  # fine
            ["3H0", "B2", "W2", "Submitted", "61", "q0", "[[7, 0]]", "", ""],  # no tuple 8
            ["3H9", "B3", "W3", "Submitted", "61", "q9", "[[0, 0]]", "", ""],  # no such item
            ["3H0", "B4", "W1", "Submitted", "61", "q0", "[[1, 1]]", "", ""],  # W1 answered q0 on line 2
            ["3H1", "B5", "W4", "Maybe", "61", "q1", "[[0, 0]]", "", ""],  # not an MTurk status
        ],
        header,
    )
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, text, filename="batch.csv")
    problems = refused.value.problems
    assert any(p.startswith("batch.csv, line 3, field 'Answer.matches'") for p in problems), problems
    assert any(p.startswith("batch.csv, line 4, field 'Input.item_id'") and "q9" in p for p in problems), problems
    assert any(p.startswith("batch.csv, line 5, field 'WorkerId'") and "line 2" in p for p in problems), problems
    assert any(p.startswith("batch.csv, line 6, field 'AssignmentStatus'") for p in problems), problems
    assert Submission.objects.count() == 0 and Assignment.objects.count() == 0
    assert Participation.objects.count() == 0


def test_mturk_results_come_in_as_rating_project_answers(make_project):  # noqa: F811
    project = make_project(name="fifa-mturk", kind=fact.Project.Kind.RATING, annotators_per_video=2)
    study = study_of("factuality", project, "fifa-mturk", provider="mturk")
    systems = list(project.systems.order_by("position", "name").values_list("name", flat=True))
    project_videos = list(
        fact.ProjectVideo.objects.filter(project=project)
        .order_by("position", "id")
        .values_list("pk", "video__external_id")
    )
    header = (
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id", "Input.video_id"]
        + [f"Answer.score_{s}" for s in systems]
        + ["Approve", "Reject"]
    )
    text = _results(
        [
            ["3V1", "R1", "W1", "Submitted", "90", str(project_videos[0][0]), ""] + ["4"] * len(systems) + ["", ""],
            ["3V2", "R2", "W2", "Approved", "80", "", project_videos[1][1]]
            + [str(i % 5 + 1) for i in range(len(systems))]
            + ["", ""],
        ],
        header,
    )
    assert mturk_import.import_results(study, text) == {"rows": 2, "created": 2, "unchanged": 0, "warnings": []}
    assert fact.CaptionRating.objects.count() == 2 * len(systems)
    assert set(
        fact.CaptionRating.objects.filter(submission__assignment__annotator__external_id="mturk:W1").values_list(
            "score", flat=True
        )
    ) == {4}
    assert mturk_import.import_results(study, text)["unchanged"] == 2
    assert fact.Submission.objects.count() == 2 and fact.CaptionRating.objects.count() == 2 * len(systems)
    bad = _results(
        [
            ["3V1", "R3", "W3", "Submitted", "90", str(project_videos[0][0]), ""]
            + ["9"]
            + ["4"] * (len(systems) - 1)
            + ["", ""],
            ["3V2", "R4", "W4", "Submitted", "90", "", "nope"] + ["4"] * len(systems) + ["", ""],
            ["3V2", "R5", "W5", "Submitted", "90", "", project_videos[1][1]]
            + ["four"]
            + ["4"] * (len(systems) - 1)
            + ["", ""],
        ],
        header,
    )
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, bad, filename="ratings.csv")
    problems = refused.value.problems
    assert any(p.startswith(f"ratings.csv, line 2, field 'Answer.score_{systems[0]}'") for p in problems), problems
    assert any(p.startswith("ratings.csv, line 3, field 'Input.video_id'") for p in problems), problems
    assert any(
        p.startswith(f"ratings.csv, line 4, field 'Answer.score_{systems[0]}'") and "four" in p for p in problems
    ), problems
    assert fact.Submission.objects.count() == 2


DEEP = "[" * 5000 + "]" * 5000  # deeper than the interpreter's recursion limit


@pytest.mark.parametrize("cell", [DEEP, '[["\\ud800", 0]]'])
def test_json_in_a_task_results_cell_is_read_as_untrusted_json(task, cell):
    """The cell was read with Python's json: a deep one was a RecursionError (a 500 from the page)."""
    study = study_of("task", task, "quality-mturk", provider="mturk")
    header = [c for c in RESULTS_HEADER if c != "Input.hit_id"]
    text = _results([["3H0", "B1", "W1", "Submitted", "61", "q0", cell, "", ""]], header)
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, text, filename="batch.csv")
    problems = refused.value.problems
    assert any(p.startswith("batch.csv, line 2, field 'Answer.matches'") for p in problems), problems
    assert Submission.objects.count() == 0 and Participation.objects.count() == 0


@pytest.mark.parametrize(
    "cell",
    [
        DEEP,
        '[{"error": 1, "spans": [[0, 99999999999999999999999999999999999999999]]}]',
        '[{"error": 1, "spans": [[0, 99]]}]',  # read, then refused by the answer's check
    ],
)
def test_json_in_a_factuality_results_cell_is_read_as_untrusted_json(make_project, cell):  # noqa: F811
    """The sentences cell was read with Python's json: a deep one was a RecursionError (a 500 from the page). A
    problem the answer's check finds in the sentences is reported on their column (it named the score's)."""
    project = make_project(name="fact-mturk", annotators_per_video=2)
    study = study_of("factuality", project, "fact-mturk", provider="mturk")
    systems = list(project.systems.order_by("position", "name").values_list("name", flat=True))
    video = fact.ProjectVideo.objects.filter(project=project).order_by("position", "id").first()
    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id"]
    header += [f"Answer.{kind}_{s}" for s in systems for kind in ("score", "sentences")]
    text = _results([["3V1", "F1", "W1", "Submitted", "90", str(video.pk)] + ["3", cell] * len(systems)], header)
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, text, filename="facts.csv")
    problems = refused.value.problems
    assert any(p.startswith(f"facts.csv, line 2, field 'Answer.sentences_{systems[0]}'") for p in problems), problems
    assert fact.Submission.objects.count() == 0 and Participation.objects.count() == 0
