"""REST import (multipart upload) and export of datasets."""

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation_site.corpus.models import Caption, Dataset
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db
MINI = FIXTURES / "factvc_mini"


@pytest.fixture
def api(staff_user):
    client = APIClient()
    token = Token.objects.create(user=staff_user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def zipped_fixture(top="factvc_mini/"):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in MINI.rglob("*"):
            if path.is_file():
                archive.write(path, top + str(path.relative_to(MINI)))
    return SimpleUploadedFile("mini.zip", buffer.getvalue(), content_type="application/zip")


@pytest.mark.parametrize("top", ["factvc_mini/", ""])
def test_import_zip_of_folder(api, top):
    response = api.post(
        "/api/datasets/import/", {"file": zipped_fixture(top), "format": "factvc", "name": "mini"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    assert response.json()["counts"] == {"videos": 4, "systems": 2, "captions": 6, "sentences": 12, "references": 3}
    assert response.json()["label_set"] == "imported"


@pytest.mark.parametrize("second", ["YouCook2-Fact/", ""])
def test_a_zip_of_two_dataset_folders_is_refused_naming_both(api, second):
    """The folder nearest the archive's root was imported alone, and the other dataset dropped without a word."""
    upload = zipped_fixture("ActivityNet-Fact/")
    with zipfile.ZipFile(upload.file, "a") as archive:
        archive.writestr(
            f"{second}factuality_annotation.json", '{"yc1": {"S": {"paragraph_score": 3, "sentences": ["a b ."]}}}'
        )
    upload = SimpleUploadedFile("two.zip", upload.file.getvalue(), content_type="application/zip")
    response = api.post(
        "/api/datasets/import/", {"file": upload, "format": "factvc", "name": "two"}, format="multipart"
    )
    assert response.status_code == 400, response.content
    [message] = response.json()["problems"]
    assert "2 dataset folders" in message and "ActivityNet-Fact/" in message
    assert (second or "(the archive's root)") in message and "factuality_annotation.json" in message
    assert not Dataset.objects.exists()


def test_a_zip_written_with_backslashes_reads_its_folders(api):
    """Some Windows tools write 'ActivityNet-Fact\\factuality_annotation.json': it was 'file not found'."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in MINI.rglob("*"):
            if path.is_file():
                archive.write(path, "ActivityNet-Fact\\" + str(path.relative_to(MINI)).replace("/", "\\"))
        archive.writestr("ActivityNet-Fact/vids.txt", "again")  # and two members named alike are refused
    twice = SimpleUploadedFile("win.zip", buffer.getvalue(), content_type="application/zip")
    response = api.post("/api/datasets/import/", {"file": twice, "format": "factvc", "name": "w"}, format="multipart")
    assert response.status_code == 400 and "two members are named 'ActivityNet-Fact/vids.txt'" in str(response.json())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in MINI.rglob("*"):
            if path.is_file():
                archive.write(path, "ActivityNet-Fact\\" + str(path.relative_to(MINI)).replace("/", "\\"))
    upload = SimpleUploadedFile("win.zip", buffer.getvalue(), content_type="application/zip")
    response = api.post("/api/datasets/import/", {"file": upload, "format": "factvc", "name": "w"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["counts"]["captions"] == 6


def test_import_single_annotation_file_then_export_it_back(api):
    original = (MINI / "factuality_annotation.json").read_bytes()
    upload = SimpleUploadedFile("factuality_annotation.json", original, content_type="application/json")
    response = api.post(
        "/api/datasets/import/", {"file": upload, "format": "factvc", "name": "mini"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    assert response.json()["counts"]["videos"] == 3  # no vids.txt: the annotated videos
    exported = api.get("/api/datasets/mini/export/?format=factvc")
    assert exported.status_code == 200
    assert exported["Content-Disposition"] == 'attachment; filename="factuality_annotation.json"'
    assert exported.content == original


def test_jsonl_import_and_export(api):
    text = (
        '{"video_id": "v1", "system": "s", "paragraph_score": 2, "sentences": [{"text": "a b", "spans": [[0, 1]]}]}\n'
    )
    upload = SimpleUploadedFile("d.jsonl", text.encode(), content_type="application/x-ndjson")
    assert (
        api.post(
            "/api/datasets/import/", {"file": upload, "format": "jsonl", "name": "d"}, format="multipart"
        ).status_code
        == 201
    )
    exported = api.get("/api/datasets/d/export/?format=jsonl")
    assert exported.content.decode().splitlines()[-1] == (
        '{"video_id": "v1", "system": "s", "paragraph_score": 2, "sentences": [{"text": "a b", "error": 1, '
        '"spans": [[0, 1]]}]}'
    )


def test_bad_upload_returns_every_problem_and_writes_nothing(api):
    text = '{"video_id": "v1", "system": "s", "paragraph_score": 9, "sentences": ["a"]}\n{"video_id": \n'
    upload = SimpleUploadedFile("bad.jsonl", text.encode())
    response = api.post("/api/datasets/import/", {"file": upload, "format": "jsonl", "name": "bad"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "bad.jsonl, line 1, paragraph_score: paragraph_score must be an integer from 1 to 5, not 9",
        "bad.jsonl, line 2: invalid JSON: Expecting value (column 14)",
    ]
    assert not Dataset.objects.exists() and not Caption.objects.exists()


def test_name_conflict_is_409(api):
    for expected in (201, 409):
        response = api.post(
            "/api/datasets/import/", {"file": zipped_fixture(), "format": "factvc", "name": "mini"}, format="multipart"
        )
        assert response.status_code == expected


@pytest.mark.parametrize(("field", "value"), [("name", "bad/name"), ("name", "-leading-dash")])
def test_an_invalid_name_is_a_bad_request_not_a_conflict(api, field, value):
    data = {"file": zipped_fixture(), "format": "factvc", "name": "mini", field: value}
    response = api.post("/api/datasets/import/", data, format="multipart")
    assert response.status_code == 400, response.content
    assert not Dataset.objects.exists()


def test_dataset_list_and_detail(api):
    api.post(
        "/api/datasets/import/", {"file": zipped_fixture(), "format": "factvc", "name": "mini"}, format="multipart"
    )
    listing = api.get("/api/datasets/").json()
    assert listing["results"][0]["name"] == "mini"
    detail = api.get("/api/datasets/mini/").json()
    assert (detail["n_videos"], detail["n_systems"], detail["systems"]) == (4, 2, ["Alpha", "Alpha_big"])


def test_researcher_api_is_staff_only(annotator, outsider, crowd_worker):
    assert annotator.api.get("/api/datasets/").status_code == 403
    assert outsider.api.get("/api/datasets/").status_code == 403
    assert crowd_worker.api.get("/api/datasets/").status_code in (401, 403)


def test_schema_documents_the_endpoints(api):
    schema = api.get("/api/schema/?format=json")
    assert schema.status_code == 200
    text = schema.content.decode()
    assert "/api/datasets/import/" in text and "/api/datasets/{name}/export/" in text
