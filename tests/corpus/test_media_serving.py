"""Local media through MediaFilesMiddleware (WhiteNoise): Range requests for seeking, and nothing but video and
image files from inside MEDIA_ROOT."""

import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client

PAYLOAD = bytes(range(256)) * 40  # 10240 bytes, each position recognisable


def _body(response):
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def stored_video():
    name = default_storage.save("videos/serving/sample.webm", ContentFile(PAYLOAD))
    yield name
    default_storage.delete(name)


def test_full_get_serves_the_file(client, stored_video):
    response = client.get(settings.MEDIA_URL + stored_video)
    assert response.status_code == 200
    assert response["Content-Type"] == "video/webm"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert int(response["Content-Length"]) == len(PAYLOAD)
    assert _body(response) == PAYLOAD


def test_full_get_advertises_byte_ranges(client, stored_video):
    response = client.get(settings.MEDIA_URL + stored_video)
    assert response.status_code == 200
    assert response.get("Accept-Ranges") == "bytes"


def test_range_request_gets_exactly_those_bytes(client, stored_video):
    response = client.get(settings.MEDIA_URL + stored_video, HTTP_RANGE="bytes=100-199")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 100-199/{len(PAYLOAD)}"
    assert _body(response) == PAYLOAD[100:200]


def test_open_ended_range_reaches_the_end(client, stored_video):
    response = client.get(settings.MEDIA_URL + stored_video, HTTP_RANGE="bytes=10000-")
    assert response.status_code == 206
    assert _body(response) == PAYLOAD[10000:]


def test_files_uploaded_after_start_up_are_served(client):
    client.get("/healthz")  # the middleware exists now
    name = default_storage.save("videos/serving/late.mp4", ContentFile(b"late video bytes"))
    try:
        assert _body(client.get(settings.MEDIA_URL + name)) == b"late video bytes"
    finally:
        default_storage.delete(name)


@pytest.mark.django_db
def test_a_page_in_media_root_is_not_served(client):
    name = default_storage.save("uploads/evil.html", ContentFile(b"<script>alert('media')</script>"))
    try:
        response = client.get(settings.MEDIA_URL + name)
        assert response.status_code == 404
        assert b"alert('media')" not in response.content
    finally:
        default_storage.delete(name)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "template", ["{media}../{name}", "{media}videos/../../{name}", "{media}%2e%2e/{name}", "{media}..%2f{name}"]
)
def test_paths_leaving_media_root_are_not_served(client, template):
    media_root = Path(settings.MEDIA_ROOT)
    with tempfile.NamedTemporaryFile(dir=media_root.parent, suffix=".webm") as outside:
        outside.write(b"SECRET-OUTSIDE-MEDIA")
        outside.flush()
        response = client.get(template.format(media=settings.MEDIA_URL, name=Path(outside.name).name))
        assert response.status_code != 200
        assert b"SECRET-OUTSIDE-MEDIA" not in _body(response)


@pytest.mark.django_db
def test_media_are_not_served_locally_when_they_live_on_s3(settings, stored_video):
    settings.USE_S3 = True
    response = Client().get(settings.MEDIA_URL + stored_video)  # a new client builds the middleware again
    assert response.status_code == 404
