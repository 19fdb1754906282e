"""The REST endpoints and the management commands are thin adapters over the same services: a task set up and
reported through each, including the command contract ``task_report --task NAME --format json``."""

import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.judgment_tasks.models import ModelAnswer, Task

from .conftest import lines, work_through

pytestmark = pytest.mark.django_db


def test_the_api_sets_up_and_reports_a_task(staff_client, videos, annotator_accounts):
    presets = staff_client.get(reverse("api-tasks-presets")).json()
    assert set(presets) >= {
        "fifa-faithfulness",
        "fifa-question-quality",
        "fifa-conversion",
        "fifa-dependency",
        "fifa-verification",
        "vc-inspector",
        "vc-inspector-binary",
    }
    created = staff_client.post(
        reverse("api-tasks"),
        {"name": "dep", "dataset": "clips", "preset": "fifa-dependency", "annotators": ["ann1"]},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["definition"]["questions"][0]["id"] == "valid"
    bad = staff_client.post(
        reverse("api-tasks"),
        {"name": "x", "dataset": "clips", "definition": {"questions": 3}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "questions: must list" in bad.json()["definition"][0]
    items = lines(
        *[
            {"item_id": f"d{n}", "video_id": f"c{n + 1}", "tuples": ["a", "b"], "dependencies": ["T2 depends on T1"]}
            for n in range(3)
        ]
    )
    response = staff_client.post(
        reverse("api-tasks-items", args=["dep"]), {"file": SimpleUploadedFile("d.jsonl", items.encode())}
    )
    assert response.status_code == 201 and response.json() == {"items": 3, "elements": 9}
    refused = staff_client.post(
        reverse("api-tasks-items", args=["dep"]), {"file": SimpleUploadedFile("d.jsonl", items.encode())}
    )
    assert refused.status_code == 400 and refused.json()["problems"][0].startswith("d.jsonl, line 1, item_id")
    detail = staff_client.get(reverse("api-tasks-detail", args=["dep"])).json()
    assert detail["progress"]["items"] == 3 and detail["definition_editable"]
    patched = staff_client.patch(
        reverse("api-tasks-detail", args=["dep"]), {"annotators_per_item": 2}, content_type="application/json"
    )
    assert patched.json()["annotators_per_item"] == 2
    assert (
        staff_client.patch(
            reverse("api-tasks-detail", args=["dep"]), {"status": "paused"}, content_type="application/json"
        ).status_code
        == 400
    )
    link = staff_client.post(
        reverse("api-tasks-participants", args=["dep"]),
        {"external_id": "p1", "limit": 2},
        content_type="application/json",
    )
    assert link.status_code == 201 and "/tasks/p/" in link.json()["url"]
    task = Task.objects.get(name="dep")
    first, second = annotator_accounts(2)
    from annotation_site.judgment_tasks import services

    services.add_member(task, second)
    for annotator in (first, second):
        work_through(task, annotator, lambda item: {"valid": ["valid"]})
    report = staff_client.get(reverse("api-tasks-report", args=["dep"])).json()
    assert report["figures"][0]["share"] == 1.0 and report["figures"][0]["name"] == "valid ratio"
    labels = staff_client.get(reverse("api-tasks-labels", args=["dep"]), {"format": "csv"}).content.decode()
    assert labels.count("\n") == 4
    upper = staff_client.get(reverse("api-tasks-labels", args=["dep"]), {"format": "json", "median_ties": "upper"})
    assert upper.status_code == 200 and upper["Content-Type"] == "application/json"
    for name in ("api-tasks-report", "api-tasks-labels"):  # an unknown tie rule is refused with the reason
        refused = staff_client.get(reverse(name, args=["dep"]), {"median_ties": "middle"})
        assert refused.status_code == 400 and "median_ties must be one of" in refused.json()["detail"]
    assert staff_client.get(reverse("api-tasks-answers", args=["dep"])).content.decode().count("\n") == 6


def test_the_commands(videos, annotator_accounts, tmp_path):
    out = StringIO()
    call_command("judgment_task", "presets", stdout=out)
    assert "fifa-verification" in out.getvalue()
    call_command(
        "judgment_task",
        "create",
        "--name",
        "vqa",
        "--dataset",
        "clips",
        "--preset",
        "fifa-verification",
        "--per-item",
        "2",
        stdout=StringIO(),
    )
    items = tmp_path / "items.jsonl"
    items.write_text(
        lines(
            *[
                {
                    "item_id": f"v{n}",
                    "video_id": f"c{n + 1}",
                    "subset": ["T2V", "V2T"][n % 2],
                    "questions": ["a?", "b?"],
                }
                for n in range(4)
            ]
        )
    )
    out = StringIO()
    call_command("task_import", "--task", "vqa", "--items", str(items), stdout=out)
    assert "Imported 4 items (8 list elements)" in out.getvalue()
    answers_file = tmp_path / "qa.jsonl"
    answers_file.write_text(
        lines(*[{"item_id": f"v{n}", "model": "M", "answers": {"answer": ["yes", "yes"]}} for n in range(4)])
        + "{broken\n"
    )
    with pytest.raises(CommandError, match=r"qa.jsonl, line 5: invalid JSON"):
        call_command("task_import", "--task", "vqa", "--model-answers", str(answers_file))
    assert not ModelAnswer.objects.exists()
    answers_file.write_text(answers_file.read_text().replace("{broken\n", ""))
    call_command("task_import", "--task", "vqa", "--model-answers", str(answers_file), stdout=StringIO())
    task = Task.objects.get(name="vqa")
    people = annotator_accounts(2)
    call_command("judgment_task", "invite", "--name", "vqa", "--annotators", "ann1", "ann2", stdout=StringIO())
    for annotator in people:
        work_through(task, annotator, lambda item: {"answer": ["yes", "no"]})
    out = StringIO()
    call_command("task_report", "--task", "vqa", "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    [figure] = report["figures"]
    assert figure["kind"] == "model_accuracy" and figure["models"]["M"]["accuracy"] == 0.5
    assert figure["models"]["M"]["subsets"] == {
        "T2V": {"units": 4, "correct": 2, "accuracy": 0.5, "missing": 0},
        "V2T": {"units": 4, "correct": 2, "accuracy": 0.5, "missing": 0},
    }
    assert report["questions"][0]["alpha"] == {"nominal": 1.0}  # perfect agreement, with both answers used
    out = StringIO()
    call_command("task_report", "--task", "vqa", "--format", "csv", "--labels", stdout=out)
    assert out.getvalue().splitlines()[1].startswith("answer,v0,c1,,,T2V,1,,,2,yes,0")
    out = StringIO()
    call_command("judgment_task", "participant", "--name", "vqa", "--participant", "P9", "--limit", "1", stdout=out)
    # a whole link on the platform's public address (was a bare path, useless to send to a participant)
    assert out.getvalue().startswith(f"{settings.CAPTIONEVAL_BASE_URL}/tasks/p/")
    out = StringIO()
    call_command(
        "judgment_task",
        "participant",
        "--name",
        "vqa",
        "--participant",
        "P8",
        "--base-url",
        "https://x.example/",
        stdout=out,
    )
    assert out.getvalue().startswith("https://x.example/tasks/p/")
    definition = tmp_path / "def.json"
    definition.write_text(json.dumps(task.definition))
    with pytest.raises(CommandError, match="work has started"):
        call_command("judgment_task", "define", "--name", "vqa", "--definition", str(definition))
    call_command("judgment_task", "close", "--name", "vqa", stdout=StringIO())
    assert Task.objects.get(name="vqa").status == "closed"


@pytest.mark.parametrize("limit", [0, -1, 10**7, "3", 2.5, True])
def test_a_participant_link_with_a_bad_limit_admits_nobody(staff_client, videos, limit):
    from annotation_site.annotators.models import Annotator

    assert (
        staff_client.post(
            reverse("api-tasks"),
            {"name": "lim", "dataset": "clips", "preset": "fifa-dependency"},
            content_type="application/json",
        ).status_code
        == 201
    )
    before = Annotator.objects.count()
    refused = staff_client.post(
        reverse("api-tasks-participants", args=["lim"]),
        {"external_id": "p-limit", "limit": limit},
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert refused.json()["detail"] == "limit must be a whole number from 1 to 1000000"
    assert Annotator.objects.count() == before


@pytest.mark.parametrize(
    "provider, external_id, message",
    [
        ("link", "p" * 201, "the participant id has 201 characters; at most 200 are allowed"),
        ("link", "p\u200b1", "invisible or control character"),
        ("link", "", "the participant id is empty"),
        ("link", ["p1"], "the participant id must be text"),
        ("p" * 31, "p1", "the provider has 31 characters; at most 30 are allowed"),
        ("crowd", "prolific:5f3a", "the provider 'crowd' is the platform's own"),
        ("Crowd", "p1", "the provider 'crowd' is the platform's own"),
        ("link", "account:7", "reserves for site accounts"),
    ],
)
def test_a_participant_is_admitted_only_under_an_id_read_like_every_id(
    staff_client, videos, provider, external_id, message
):
    """A 201-character id was a 500 on PostgreSQL (the column holds 200; SQLite stored it), an invisible
    character made one person two participants, and provider 'crowd' with a crowd key admitted someone as a
    crowd study's participant."""
    from annotation_site.annotators.models import Annotator

    staff_client.post(
        reverse("api-tasks"),
        {"name": "ids", "dataset": "clips", "preset": "fifa-dependency"},
        content_type="application/json",
    )
    before = Annotator.objects.count()
    refused = staff_client.post(
        reverse("api-tasks-participants", args=["ids"]),
        {"provider": provider, "external_id": external_id},
        content_type="application/json",
    )
    assert refused.status_code == 400 and message in refused.json()["detail"], refused.content
    assert Annotator.objects.count() == before


def test_one_person_is_one_participant_whatever_the_unicode_form(staff_client, videos):
    from annotation_site.annotators.models import Annotator

    staff_client.post(
        reverse("api-tasks"),
        {"name": "nfkc", "dataset": "clips", "preset": "fifa-dependency"},
        content_type="application/json",
    )
    for spelling in ("alice", "\uff41lice", " alice "):  # fullwidth a, surrounding spaces
        made = staff_client.post(
            reverse("api-tasks-participants", args=["nfkc"]),
            {"provider": "link", "external_id": spelling},
            content_type="application/json",
        )
        assert made.status_code == 201, made.content
    assert list(Annotator.objects.filter(kind="crowd").values_list("external_id", flat=True)) == ["alice"]
    page = staff_client.post(
        reverse("tasks-participant-link", args=["nfkc"]), {"provider": "link", "external_id": "a\u200bb"}, follow=True
    )
    assert page.status_code == 200
    assert any("No link was made" in str(m) for m in page.context["messages"])


def test_a_refused_next_item_makes_no_annotator_record(make_task, staff_researcher):
    """As for a project's next video (tests/factuality/test_api.py): refused, and no annotator record made."""
    make_task("cap", "fifa-faithfulness", [{"video_id": "c1", "text": "a caption"}])
    response = staff_researcher.api.post(reverse("api-tasks-next", args=["cap"]))
    assert response.status_code == 403 and response.json()["detail"] == "you are not a member of this task"
    assert not Annotator.objects.filter(user=staff_researcher.user).exists()
