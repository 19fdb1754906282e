"""Text longer than the column it goes into is refused with the field's name, on every database (issue #11:
"field lengths matching the model columns ... checked before the work is done"). SQLite does not enforce a
column's length, PostgreSQL does: each case below was a 500 on PostgreSQL (and stored whole on SQLite), found on
2026-11-26 by sending the create and settings endpoints values one character longer than their columns. A unit
and its invitations are made in one transaction, so a refused user name leaves no unit and no account behind."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation_site.annotators.services import invite
from annotation_site.corpus.models import Dataset
from annotation_site.factuality.models import Project
from annotation_site.judgment_tasks.models import Task

pytestmark = pytest.mark.django_db

LONG_NAME = "u" * 151  # auth_user.username holds 150


def post(client, name, body, method="post", args=()):
    return getattr(client, method)(reverse(name, args=args), body, content_type="application/json")


def accounts(name):
    return get_user_model().objects.filter(username=name).exists()


@pytest.fixture
def captioned(db):
    from ..assessment.conftest import make_dataset

    return make_dataset("captioned", n_videos=4)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"title": "T" * 201}, "title: Ensure this value has at most 200 characters (it has 201)."),
        ({"annotators": ["ann1", LONG_NAME]}, "username: A user name has at most 150 characters, not 151."),
        ({"annotators": ["ann1", "not a name!"]}, "Enter a valid username."),
    ],
)
def test_a_task_is_created_whole_or_not_at_all(staff_client, videos, body, message):
    response = post(
        staff_client, "api-tasks", {"name": "long", "dataset": "clips", "preset": "fifa-dependency", **body}
    )
    assert response.status_code == 400 and response.json()["detail"].startswith(message), response.content
    assert not Task.objects.exists() and not accounts("ann1")


def test_a_task_title_too_long_is_refused_when_changed(staff_client, videos):
    post(staff_client, "api-tasks", {"name": "t", "dataset": "clips", "preset": "fifa-dependency"})
    response = post(staff_client, "api-tasks-detail", {"title": "T" * 201}, method="patch", args=["t"])
    assert response.status_code == 400 and "at most 200 characters" in response.json()["detail"]
    assert Task.objects.get().title != "T" * 201


def test_a_project_question_too_long_is_refused(staff_client, captioned):
    body = {"name": "p", "dataset": "captioned", "kind": "rating", "preset": "vatex-eval", "question": "Q" * 301}
    response = post(staff_client, "api-factuality-projects", body)
    assert response.status_code == 400 and "at most 300 characters" in response.json()["detail"], response.content
    assert not Project.objects.exists()


def test_a_project_with_a_refused_annotator_is_not_made(staff_client, captioned):
    body = {"name": "p", "dataset": "captioned", "annotators": ["ann1", LONG_NAME]}
    response = post(staff_client, "api-factuality-projects", body)
    assert response.status_code == 400 and "at most 150 characters" in response.json()["detail"], response.content
    assert not Project.objects.exists() and not accounts("ann1")


def test_the_create_page_makes_nothing_when_an_annotator_is_refused(staff_client, videos):
    page = staff_client.post(
        reverse("tasks-create"),
        {
            "name": "paged",
            "dataset": "clips",
            "preset": "fifa-dependency",
            "annotators_per_item": "3",
            "annotators": f"ann1\n{LONG_NAME}",
        },
    )
    assert page.status_code == 200 and "username: A user name has at most 150 characters" in page.content.decode()
    assert not Task.objects.exists() and not accounts("ann1")


def test_user_names_are_read_like_django_reads_them(db):
    assert invite("\uff41nn")[0].user.username == "ann"  # NFKC, as Django's own forms store names
    assert invite("ann")[0].user.username == "ann" and get_user_model().objects.filter(username="ann").count() == 1


def test_a_scale_label_too_long_is_refused(staff_client, captioned):
    body = {"name": "r", "dataset": "captioned", "kind": "rating", "preset": "vatex-eval"}
    assert post(staff_client, "api-factuality-projects", body).status_code == 201
    before = list(Project.objects.get(name="r").anchors.values_list("label", flat=True))
    response = post(staff_client, "api-factuality-project", {"anchors": {"1": "A" * 301}}, "patch", ["r"])
    assert response.status_code == 400 and "has more than 300 characters" in response.json()["detail"]
    assert list(Project.objects.get(name="r").anchors.values_list("label", flat=True)) == before


@pytest.mark.parametrize("name, route", [("t", "api-tasks-detail"), ("r", "api-factuality-project")])
def test_a_refused_change_changes_nothing(staff_client, videos, captioned, name, route):
    """A PATCH applied its fields, then refused the status: 400, with the fields changed."""
    post(staff_client, "api-tasks", {"name": "t", "dataset": "clips", "preset": "fifa-dependency"})
    post(staff_client, "api-factuality-projects", {"name": "r", "dataset": "captioned"})
    response = post(staff_client, route, {"description": "changed", "status": "paused"}, "patch", [name])
    assert response.status_code == 400, response.content
    model = Task if route == "api-tasks-detail" else Project
    assert model.objects.get(name=name).description == ""


def test_item_labels_and_the_ids_made_of_them_fit_their_columns(staff_client, videos):
    """An item's system, model or subset past its 100-character column, or an item id made of video_id:system:model
    past the key's 200 (each part within its own limit), was a database error on PostgreSQL (a 500 from the API
    and the page, a traceback from ``task_import``; 2026-11-27). Now each is a problem of its line and field."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation_site.interchange import jsonl
    from annotation_site.interchange.services import import_bundle
    from annotation_site.judgment_tasks import services
    from annotation_site.judgment_tasks.models import Item

    from .conftest import lines

    long_video = "v" * 190
    import_bundle(
        jsonl.read(lines({"type": "video", "video_id": long_video}), filename="long.jsonl"),
        name="long",
        source_format="jsonl",
    )
    services.create_task(name="vqa", dataset=videos, preset="fifa-verification", annotators_per_item=2)
    services.create_task(
        name="vqa-long", dataset=Dataset.objects.get(name="long"), preset="fifa-verification", annotators_per_item=2
    )
    text = lines(
        {"item_id": "x", "video_id": "c1", "system": "s" * 101, "questions": ["a?"]},
        {"item_id": "y", "video_id": "c1", "model": "m" * 101, "questions": ["a?"]},
        {"item_id": "z", "video_id": "c1", "subset": "b" * 101, "questions": ["a?"]},
        {"item_id": "k" * 201, "video_id": "c1", "questions": ["a?"]},
    )
    response = staff_client.post("/api/tasks/t/vqa/items/", {"file": SimpleUploadedFile("items.jsonl", text.encode())})
    assert response.status_code == 400, response.content
    shown = response.content.decode()
    for line, field in ((1, "system"), (2, "model"), (3, "subset"), (4, "item_id")):
        assert f"items.jsonl, line {line}, {field}: {field} must be a non-empty text of at most" in shown, field
    made = lines({"video_id": long_video, "system": "s" * 50, "questions": ["a?"]})
    response = staff_client.post(
        "/api/tasks/t/vqa-long/items/", {"file": SimpleUploadedFile("made.jsonl", made.encode())}
    )
    assert response.status_code == 400, response.content
    assert "made.jsonl, line 1, item_id: without item_id the item's id is video_id:system:model, 241 characters" in (
        response.content.decode()
    )
    assert not Item.objects.exists()
