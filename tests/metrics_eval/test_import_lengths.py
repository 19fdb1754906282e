"""Metric names, versions and pair set names longer than their columns are refused with the file, line and field
(or the option), not written: on PostgreSQL each was a database error (a 500 from the import page and the API,
a traceback from the commands), found on 2026-11-27 by sending each entry point values one character past its
column; SQLite stored them whole."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from metrics_eval import score_import
from metrics_eval.models import CaptionPair, Metric

pytestmark = pytest.mark.django_db

NAME = "m" * 61  # Metric.name holds 60


def test_the_limits_are_the_columns():
    assert score_import.NAME_MAX_LENGTH == Metric._meta.get_field("name").max_length
    assert score_import.VERSION_MAX_LENGTH == Metric._meta.get_field("version").max_length


def upload(staff_client, name, text):
    return staff_client.post(
        "/api/metrics/datasets/tiny/import/", {"file": SimpleUploadedFile(name, text.encode())}, format="multipart"
    )


@pytest.mark.parametrize(
    "name, text, problem",
    [
        ("long.csv", f"video_id,system,metric,score\nvid-a,Alpha,{NAME},1\n", "long.csv, line 2, metric: metric must"),
        ("wide.csv", f"video_id,system,{NAME}\nvid-a,Alpha,1\n", f"wide.csv, line 1, {NAME}: column {NAME!r} must"),
        ("lines.jsonl", json.dumps({"video_id": "vid-a", "system": "Alpha", "metric": NAME, "score": 1}), "line 1"),
        ("one.json", json.dumps({"metric": NAME, "scores": []}), "one.json, line 1, metric: metric must"),
        (
            "described.json",
            json.dumps(
                {"metric": "m", "version": "v" * 201, "scores": [{"video_id": "vid-a", "system": "Alpha", "score": 1}]}
            ),
            "described.json, line 1, version: version must be at most 200 characters, not 201",
        ),
    ],
)
def test_a_score_file_with_a_name_or_version_past_its_column_is_refused(
    staff_client, tiny_dataset, name, text, problem
):
    response = upload(staff_client, name, text)
    assert response.status_code == 400, response.content
    assert problem in response.content.decode()
    assert "at most" in response.content.decode()
    assert not Metric.objects.exists()


def test_the_commands_refuse_a_version_or_a_pair_set_name_past_its_column(tiny_dataset, tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text("video_id,system,metric,score\nvid-a,Alpha,m,1\n")
    with pytest.raises(CommandError, match="the version given with it: version must be at most 200 characters"):
        call_command("metric_scores", "--dataset", "tiny", "--import", str(scores), "--metric-version", "v" * 201)
    assert not Metric.objects.exists()
    call_command("metric_scores", "--dataset", "tiny", "--import", str(scores), "--metric-version", "v" * 200)
    assert Metric.objects.get().version == "v" * 200
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("video_id,correct,foil\nvid-a,Alpha,Beta\n")
    with pytest.raises(CommandError, match="the pair set name has 101 characters; at most 100 are allowed"):
        call_command("caption_pairs", "--dataset", "tiny", "--import", str(pairs), "--name", "p" * 101)
    assert not CaptionPair.objects.exists()
    call_command("caption_pairs", "--dataset", "tiny", "--import", str(pairs), "--name", "p" * 100)
    assert CaptionPair.objects.get().pair_set == "p" * 100


def test_a_name_ending_in_a_line_break_is_no_name(staff_client, tiny_dataset):
    """``$`` let "m\\n" through the name rule (it matches before a final line break): stored with it."""
    text = json.dumps({"metric": "m\n", "scores": [{"video_id": "vid-a", "system": "Alpha", "score": 1}]})
    response = upload(staff_client, "newline.json", text)
    assert (
        response.status_code == 400
        and "newline.json, line 1, metric: metric must be a name" in response.content.decode()
    )
    assert not Metric.objects.exists()
