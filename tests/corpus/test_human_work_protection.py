"""Human work is never deleted as a side effect (issue #12, item 3): replacing a dataset (command, API, page),
deleting it in the admin and deleting one of its videos through the API are refused while people's judgments
are on it, with a message that says what would be lost and how to export it; an explicit force goes ahead."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation_site.corpus.models import Dataset, Video
from annotation_site.factuality.demo import add_project
from annotation_site.factuality.models import Submission
from assessment import simulation
from assessment.models import Judgment
from tests.assessment.conftest import make_dataset, small_campaign
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db
MINI = FIXTURES / "factvc_mini"


def import_mini(name, *extra):
    out = io.StringIO()
    call_command(
        "import_dataset", "--format", "factvc", "--name", name, *extra, str(MINI), stdout=out, stderr=io.StringIO()
    )
    return out.getvalue()


def da_judged(name="judged"):
    """A dataset with a DA campaign and the judgments of a simulated crowd on it."""
    dataset = make_dataset(name, n_videos=12)
    campaign = small_campaign(dataset, f"{name}-da")
    simulation.simulate_campaign(
        campaign, {"diligent": 2}, {"human": 80, "Alpha": 60, "Beta": 50, "Gamma": 40}, seed=1, prefix=name
    )
    assert Judgment.objects.exists()
    return dataset


def factuality_judged(name="answered"):
    """A dataset imported from the FactVC fixture with a project answered by simulated annotators."""
    import_mini(name)
    dataset = Dataset.objects.get(name=name)
    add_project(dataset)
    assert Submission.objects.filter(assignment__project__dataset=dataset).exists()
    return dataset


@pytest.fixture
def api(staff_researcher):
    return staff_researcher.api


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("admin", "a@example.org", "pw-admin-12345"))
    return client


def test_import_replace_is_refused_while_da_judgments_are_on_the_dataset(db):
    dataset = da_judged()
    judgments = Judgment.objects.count()
    with pytest.raises(CommandError) as refused:
        import_mini("judged", "--replace")
    message = str(refused.value)
    assert (
        f"replacing dataset 'judged' would delete human work that cannot be made again: {judgments} DA judgments"
        in message
    )
    assert "judgments.csv" in message and "--force-delete-judgments" in message
    assert Dataset.objects.get(name="judged").pk == dataset.pk and Judgment.objects.count() == judgments

    out = import_mini("judged", "--replace", "--force-delete-judgments")
    assert "Imported dataset 'judged'" in out
    assert Dataset.objects.get(name="judged").pk != dataset.pk and not Judgment.objects.exists()


def test_a_dataset_without_judgments_is_replaced_as_before(db):
    import_mini("plain")
    first = Dataset.objects.get(name="plain").pk
    import_mini("plain", "--replace")
    assert Dataset.objects.get(name="plain").pk != first


def test_api_and_page_imports_refuse_a_replace_that_would_delete_factuality_answers(api, staff_client):
    dataset = factuality_judged()
    answers = Submission.objects.count()
    upload = MINI / "factuality_annotation.json"

    def post(client, url, **extra):
        with open(upload, "rb") as handle:
            return (
                client.post(
                    url,
                    {"file": handle, "format": "factvc", "name": "answered", "replace": True, **extra},
                    format="multipart",
                )
                if client is api
                else client.post(
                    url, {"file": handle, "format": "factvc", "name": "answered", "replace": "on", **extra}
                )
            )

    response = post(api, "/api/datasets/import/")
    assert response.status_code == 409
    assert f"{answers} factuality answers" in response.json()["detail"]
    assert "factuality_labels --project NAME --export FILE" in response.json()["detail"]
    page = post(staff_client, "/import/")
    assert page.status_code == 200 and f"{answers} factuality answers" in page.content.decode()
    assert Dataset.objects.get(name="answered").pk == dataset.pk and Submission.objects.count() == answers

    response = post(api, "/api/datasets/import/", force_delete_judgments=True)
    assert response.status_code == 201, response.json()
    assert not Submission.objects.exists()


def test_admin_delete_is_refused_with_what_would_be_lost_unless_forced(admin_client):
    dataset = da_judged()
    judgments = Judgment.objects.count()
    response = admin_client.get(f"/admin/corpus/dataset/{dataset.pk}/delete/", follow=True)
    assert f"{judgments} DA judgments" in response.content.decode()
    response = admin_client.post(
        "/admin/corpus/dataset/",
        {"action": "delete_selected", "_selected_action": [dataset.pk], "post": "yes"},
        follow=True,
    )
    assert "would delete human work" in response.content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists() and Judgment.objects.count() == judgments

    url = f"/admin/corpus/dataset/{dataset.pk}/delete/?force_delete_judgments=1"
    assert admin_client.get(url).status_code == 200  # Django's confirmation page
    admin_client.post(url, {"post": "yes"})
    assert not Dataset.objects.filter(pk=dataset.pk).exists() and not Judgment.objects.exists()


def test_admin_deletes_a_dataset_without_judgments_as_before(admin_client):
    import_mini("plain")
    dataset = Dataset.objects.get(name="plain")
    admin_client.post(f"/admin/corpus/dataset/{dataset.pk}/delete/", {"post": "yes"})
    assert not Dataset.objects.filter(pk=dataset.pk).exists()


def test_video_api_delete_is_refused_while_its_captions_are_judged(api):
    dataset = da_judged()
    judged = Video.objects.filter(dataset=dataset, captions__da_items__judgments__isnull=False).distinct().first()
    judgments = Judgment.objects.filter(item__caption__video=judged).count()
    assert judgments
    response = api.delete(f"/api/videos/{judged.pk}/")
    assert response.status_code == 409
    assert (
        f"deleting video '{judged.external_id}' would delete human work that cannot be made again: "
        f"{judgments} DA judgments" in response.json()["detail"]
    )
    assert Video.objects.filter(pk=judged.pk).exists()
    assert api.delete(f"/api/videos/{judged.pk}/?force_delete_judgments=true").status_code == 204
    assert not Video.objects.filter(pk=judged.pk).exists()


def test_video_api_delete_of_a_video_a_task_shows_is_a_clear_refusal(api):
    """A judgment task's items point at their video with RESTRICT: deleting the video alone raised an unhandled
    RestrictedError (a 500), with or without answers on them and forced or not. It is a 409 naming the task."""
    from annotation_site.judgment_tasks import imports, services

    import_mini("shown")
    dataset = Dataset.objects.get(name="shown")
    video = Video.objects.filter(dataset=dataset).order_by("position").first()
    task = services.create_task(name="shows-it", dataset=dataset, preset="fifa-question-quality")
    item = {"item_id": "q0", "video_id": video.external_id, "tuples": ["a"], "questions": ["Is there a?"]}
    imports.import_items(task, json.dumps(item) + "\n", filename="items.jsonl")
    for query in ("", "?force_delete_judgments=true"):
        response = api.delete(f"/api/videos/{video.pk}/{query}")
        assert response.status_code == 409, response.content
        assert response.json()["detail"] == (
            f"video {video.external_id!r} is shown by 1 item of judgment task shows-it: replace the task's items, "
            "or delete the task, first; nothing was deleted"
        )
        assert Video.objects.filter(pk=video.pk).exists()
