"""The admin pages of the corpus and the factuality labels: they open, and their lists take a constant number
of queries however many rows there are."""

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video
from annotation_site.demo import services as demo
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel
from annotation_site.interchange.services import import_bundle

pytestmark = pytest.mark.django_db

MODELS = [Dataset, System, Video, Caption, Sentence, Reference, LabelSet, ParagraphLabel, SentenceLabel, ErrorSpan]


def _import(name, n_videos):
    """A labelled dataset (the demo's captions, without video files)."""
    return import_bundle(demo.build_bundle(demo.demo_videos(n_videos)), name=name, source_format="demo").dataset


def _url(model, view, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_model_is_registered():
    assert all(admin.site.is_registered(model) for model in MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_search_and_change_pages_open(admin_client, model):
    _import("admin-pages", 2)
    response = admin_client.get(_url(model, "changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == model.objects.count() > 0
    assert admin_client.get(_url(model, "changelist"), {"q": "demo"}).status_code == 200
    obj = model.objects.order_by("pk").first()
    assert admin_client.get(_url(model, "change", obj.pk)).status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_changelist_queries_do_not_grow_with_rows(admin_client, model, django_assert_max_num_queries):
    _import("small", 1)
    with CaptureQueriesContext(connection) as small:
        assert admin_client.get(_url(model, "changelist")).status_code == 200
    _import("large", 12)
    with django_assert_max_num_queries(len(small)):
        response = admin_client.get(_url(model, "changelist"))
    assert response.context["cl"].result_count == model.objects.count()


def test_process_again_action_probes_the_selected_videos(
    admin_client, make_webm, eager_tasks, django_capture_on_commit_callbacks
):
    from django.core.files import File

    dataset = Dataset.objects.create(name="admin-action")
    video = Video(dataset=dataset, external_id="again", status=Video.Status.FAILED, processing_error="old error")
    with open(make_webm(2.0), "rb") as handle:
        video.file.save("again.webm", File(handle), save=True)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            _url(Video, "changelist"), {"action": "process_again", "_selected_action": [video.pk]}
        )
    assert response.status_code == 302
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.processing_error == ""
    assert video.duration == pytest.approx(2.0, abs=0.1)


def test_a_file_uploaded_in_the_admin_is_processed(
    admin_client, make_webm, eager_tasks, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    dataset = Dataset.objects.create(name="admin-upload")
    upload = SimpleUploadedFile("upload.webm", make_webm(2.0, "smptebars", "320x180").read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            _url(Video, "add"),
            {"dataset": dataset.pk, "external_id": "uploaded", "position": 0, "url": "", "file": upload},
        )
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    video = Video.objects.get(dataset=dataset, external_id="uploaded")
    assert video.status == Video.Status.READY and video.duration == pytest.approx(2.0, abs=0.1)
