"""The video endpoint /api/videos/: adding files and URLs (staff only), processing, and constant queries."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation_site.corpus.models import Dataset, Video

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    return Dataset.objects.create(name="api-videos")


@pytest.fixture
def token_client(staff_user):
    return Client(headers={"authorization": f"Token {Token.objects.create(user=staff_user).key}"})


def _upload(path, name="clip.webm"):
    return SimpleUploadedFile(name, path.read_bytes(), content_type="video/webm")


@pytest.mark.parametrize("how", ["token", "session"])
def test_staff_upload_a_file_and_it_is_processed(
    request, how, dataset, make_webm, eager_tasks, django_capture_on_commit_callbacks
):
    client = request.getfixturevalue("token_client" if how == "token" else "staff_client")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(
            "/api/videos/",
            {
                "dataset": "api-videos",
                "external_id": "v_upload",
                "file": _upload(make_webm(2.4, "smptebars", "320x180")),
            },
        )
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "file" and response.json()["status"] == "pending"
    assert len(callbacks) == 1  # the processing task is sent once the row is committed
    detail = client.get(f"/api/videos/{response.json()['id']}/").json()
    assert detail["status"] == "ready"
    assert detail["duration"] == pytest.approx(2.4, abs=0.1)
    assert (detail["width"], detail["height"]) == (320, 180)
    assert detail["thumbnail_url"].endswith(".jpg")
    assert detail["playback_url"].startswith("/media/videos/")


def test_a_youtube_url_makes_a_youtube_video(token_client, dataset):
    response = token_client.post(
        "/api/videos/",
        {"dataset": "api-videos", "external_id": "yt", "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["kind"] == "youtube" and body["status"] == "external"
    assert Video.objects.get(dataset=dataset, external_id="yt").youtube_id == "dQw4w9WgXcQ"


def test_file_and_url_together_are_refused(token_client, dataset, make_webm):
    response = token_client.post(
        "/api/videos/",
        {
            "dataset": "api-videos",
            "external_id": "both",
            "url": "https://example.org/v.mp4",
            "file": _upload(make_webm(2.0)),
        },
    )
    assert response.status_code == 400
    assert not Video.objects.filter(external_id="both").exists()


@pytest.mark.parametrize("how", ["session", "token", "anonymous"])
def test_non_staff_cannot_add_or_list_videos(how, dataset, annotator):
    user = annotator.user
    client = Client()
    if how == "session":
        client.force_login(user)
    elif how == "token":
        client = Client(headers={"authorization": f"Token {Token.objects.create(user=user).key}"})
    response = client.post(
        "/api/videos/",
        {"dataset": "api-videos", "external_id": "x", "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"},
    )
    refused = (403,) if how != "anonymous" else (401, 403)  # a logged-in non-staff user is forbidden
    assert response.status_code in refused
    assert client.get("/api/videos/").status_code in refused
    assert not Video.objects.exists()


def _add_videos(dataset, start, count):
    Video.objects.bulk_create(
        [
            Video(
                dataset=dataset,
                external_id=f"v{i:03d}",
                position=i,
                file=f"videos/x/v{i:03d}.webm",
                thumbnail=f"thumbnails/x/v{i:03d}.jpg",
                duration=3.0,
                width=320,
                height=180,
                status=Video.Status.READY,
            )
            for i in range(start, start + count)
        ]
    )


def test_the_list_uses_the_same_number_of_queries_for_5_and_50_videos(
    staff_client, dataset, django_assert_max_num_queries
):
    _add_videos(dataset, 0, 5)
    with CaptureQueriesContext(connection) as five:
        response = staff_client.get("/api/videos/?dataset=api-videos")
    assert response.json()["count"] == 5
    _add_videos(dataset, 5, 45)
    with django_assert_max_num_queries(len(five)):
        response = staff_client.get("/api/videos/?dataset=api-videos")
    assert response.json()["count"] == 50 and len(response.json()["results"]) == 50
