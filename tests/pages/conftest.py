"""Fixtures of the page tests: datasets built the way users build them, by importing JSONL text."""

import json

import pytest

from annotation_site.interchange import jsonl
from annotation_site.interchange.services import import_bundle


def import_jsonl(text, name="demo", **kwargs):
    """Read JSONL text and write it as dataset ``name`` (the same path as the import page and command)."""
    return import_bundle(jsonl.read(text, filename=f"{name}.jsonl"), name=name, source_format="jsonl", **kwargs)


def lines(*objects):
    return "".join(json.dumps(obj) + "\n" for obj in objects)


SAMPLE = lines(
    {"type": "video", "video_id": "v1", "duration": 12.5},
    {"type": "video", "video_id": "v2", "url": "https://www.youtube.com/watch?v=AbCdEfGhIj0"},
    {
        "type": "reference",
        "video_id": "v1",
        "reference_set": "gt_1",
        "text": "A man rides a horse. <img src=x onerror=alert(2)>",
    },
    {
        "video_id": "v1",
        "system": "COOT",
        "paragraph_score": 2,
        "sentences": [
            {
                "text": "a man rides a red horse across the field .",
                "error": 1,
                "spans": [[4, 6]],
                "timestamp": [0.5, 3.25],
            },
            {"text": "he waves at the camera .", "error": 0, "timestamp": [3.25, 6.0]},
        ],
    },
    {
        "video_id": "v1",
        "system": "<i>evil</i>",
        "is_human": True,
        "paragraph_score": 5,
        "sentences": [
            {"text": '<script>alert("caption")</script> rides a horse .', "error": 0},
        ],
    },
    {
        "video_id": "v2",
        "system": "COOT",
        "paragraph_score": 4,
        "sentences": [
            {"text": "a woman is cooking .", "error": 1, "spans": [[1, 2]]},
        ],
    },
)


@pytest.fixture
def sample_dataset(db):
    """Two videos (v1 with labelled captions of two systems, v2 a YouTube clip), one reference."""
    return import_jsonl(SAMPLE, name="sample").dataset


@pytest.fixture
def user_client(client, django_user_model):
    user = django_user_model.objects.create_user("annotator", "a@example.org", "pw-annotator-1")
    client.force_login(user)
    return client


@pytest.fixture
def jsonl_dataset(db):
    """The importer as a fixture: ``jsonl_dataset(text, name)`` returns the ImportResult."""
    return import_jsonl
