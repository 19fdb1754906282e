"""Media on S3: a real S3 HTTP endpoint (moto's server on loopback) behind django-storages, configured as
annotation_site/settings.py configures it when AWS_STORAGE_BUCKET_NAME is set."""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import boto3
import pytest
from django.core.files import File

from annotation_site.corpus import services, synthetic, video_processing
from annotation_site.corpus.models import Dataset, Video

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUCKET = "captioneval-media-test"
KEYS = {"access_key": "testing-access-key", "secret_key": "testing-secret-key"}
REGION = "us-east-1"


@pytest.fixture(scope="module")
def s3_endpoint():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=KEYS["access_key"],
        aws_secret_access_key=KEYS["secret_key"],
    )
    client.create_bucket(Bucket=BUCKET)
    yield endpoint, client
    server.stop()


@pytest.fixture
def s3_media(s3_endpoint, settings):
    """Media storage on the bucket for one test (Django's setting_changed handler resets default_storage)."""
    endpoint, client = s3_endpoint
    settings.USE_S3 = True
    settings.AWS_STORAGE_BUCKET_NAME = BUCKET
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "region_name": REGION,
                "endpoint_url": endpoint,
                **KEYS,
                "addressing_style": "path",
                "querystring_auth": True,
                "querystring_expire": 3600,
                "file_overwrite": False,
                "default_acl": None,
            },
        },
    }
    return endpoint, client


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return synthetic.make_video(
        tmp_path_factory.mktemp("s3") / "clip.webm", seconds=3.5, pattern="mandelbrot", size="320x240"
    )


def _add(clip, external_id):
    dataset, _ = Dataset.objects.get_or_create(name="s3")
    with open(clip, "rb") as handle:
        return services.add_video(dataset, external_id, file=File(handle, name="clip.webm"))


def _get(url, **headers):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only, never a proxy
    with opener.open(urllib.request.Request(url, headers=headers), timeout=30) as response:
        return response.status, response.headers, response.read()


@pytest.mark.django_db
def test_an_added_video_file_is_stored_in_the_bucket(s3_media, clip):
    _, client = s3_media
    video = _add(clip, "stored")
    with pytest.raises(NotImplementedError):
        video.file.path  # noqa: B018  (really on S3, not on the local disk)
    head = client.head_object(Bucket=BUCKET, Key=video.file.name)
    assert head["ContentLength"] == clip.stat().st_size
    body = client.get_object(Bucket=BUCKET, Key=video.file.name)["Body"].read()
    assert body == clip.read_bytes()


@pytest.mark.django_db
def test_playback_url_is_presigned_and_answers_range_requests(s3_media, clip):
    endpoint, _ = s3_media
    video = _add(clip, "playback")
    url = video.playback_url
    assert url.startswith(f"{endpoint}/{BUCKET}/{video.file.name}?")
    assert "X-Amz-Signature=" in url or "Signature=" in url
    status, headers, body = _get(url, Range="bytes=100-199")
    data = clip.read_bytes()
    assert status == 206
    assert headers.get("Content-Range") == f"bytes 100-199/{len(data)}"
    assert body == data[100:200]
    status, _, body = _get(url)
    assert status == 200 and body == data


@pytest.mark.django_db
def test_process_video_works_on_files_in_the_bucket(s3_media, clip):
    _, client = s3_media
    video = _add(clip, "processed")
    video_processing.process_video(Video.objects.get(pk=video.pk))
    video = Video.objects.get(pk=video.pk)
    assert video.status == Video.Status.READY, video.processing_error
    assert video.duration == pytest.approx(3.5, abs=0.1)
    assert (video.width, video.height) == (320, 240)
    thumbnail = client.get_object(Bucket=BUCKET, Key=video.thumbnail.name)["Body"].read()
    assert thumbnail[:2] == b"\xff\xd8"

    first = video.thumbnail.name
    video_processing.process_video(video)  # again: the old thumbnail is replaced, not left in the bucket
    assert video.thumbnail.name != first
    client.head_object(Bucket=BUCKET, Key=video.thumbnail.name)
    with pytest.raises(client.exceptions.ClientError):
        client.head_object(Bucket=BUCKET, Key=first)


def _settings_in_subprocess(tmp_path, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3_"))}
    environment.update(DJANGO_SETTINGS_MODULE="annotation_site.settings", CAPTIONEVAL_VAR_DIR=str(tmp_path), **env)
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "from django.core.files.storage import storages; s = storages['default']; "
        "print(json.dumps({'use_s3': settings.USE_S3, 'default': settings.STORAGES['default'], "
        "'class': type(s).__name__, 'url': s.url('videos/a.webm')}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_settings_switch_to_s3_from_the_environment(tmp_path):
    loaded = _settings_in_subprocess(
        tmp_path,
        AWS_STORAGE_BUCKET_NAME="media-bucket",
        AWS_ENDPOINT_URL_S3="http://127.0.0.1:9",
        AWS_ACCESS_KEY_ID="key-id",
        AWS_SECRET_ACCESS_KEY="secret",
    )
    assert loaded["use_s3"] is True
    assert loaded["default"]["BACKEND"] == "storages.backends.s3.S3Storage"
    options = loaded["default"]["OPTIONS"]
    assert options["bucket_name"] == "media-bucket" and options["endpoint_url"] == "http://127.0.0.1:9"
    assert options["addressing_style"] == "path" and options["querystring_auth"] is True
    assert loaded["class"] == "S3Storage"
    assert loaded["url"].startswith("http://127.0.0.1:9/media-bucket/videos/a.webm?")  # signed locally, no request


def test_settings_keep_local_media_without_a_bucket(tmp_path):
    loaded = _settings_in_subprocess(tmp_path)
    assert loaded["use_s3"] is False
    assert loaded["default"]["BACKEND"] == "django.core.files.storage.FileSystemStorage"
    assert loaded["class"] == "FileSystemStorage"


@pytest.mark.django_db
def test_the_demo_dataset_can_live_on_s3(s3_media):
    from io import StringIO

    from django.core.management import call_command

    _, client = s3_media
    call_command("load_demo", "--videos", "1", stdout=StringIO())
    video = Video.objects.get(dataset__name="demo")
    assert video.status == Video.Status.READY, video.processing_error
    assert video.duration == pytest.approx(4.0, abs=0.1)
    assert client.head_object(Bucket=BUCKET, Key=video.file.name)["ContentLength"] > 1000
    assert client.get_object(Bucket=BUCKET, Key=video.thumbnail.name)["Body"].read(2) == b"\xff\xd8"
