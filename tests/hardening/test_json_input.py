"""Untrusted JSON is read in one place (annotation_site.safe_json) and refused with a clear message: by the REST
API's parser (every API view), the webhook and the importers (issue #11, "Server errors instead of clear
errors")."""

import json
import re
from pathlib import Path

import pytest
from django.urls import URLResolver, get_resolver
from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from annotation_site import safe_json
from annotation_site.interchange import jsonl
from annotation_site.interchange.bundle import FormatError
from annotation_site.safe_json import JSONInputError, SafeJSONParser


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100000 + "]" * 100000, "nested more than 32 levels deep"),
        ('{"a": ' + "[" * 33 + "]" * 33 + "}", "nested more than 32 levels deep"),
        ("1" + "0" * 5000, "a number of 5001 characters (at most 40)"),
        ('{"x": -1.' + "5" * 60 + "}", "a number of 63 characters"),
        ('{"a": "\\ud800"}', "the value at $.a holds a lone UTF-16 surrogate"),
        ('{"a": ["ok", "\\udc00x"]}', "the value at $.a[1] holds a lone UTF-16 surrogate"),
        ('{"k\\u0000": 1}', 'the key at $["k\\u0000"] holds a NUL character'),
        ("[NaN]", "NaN is not a number JSON allows"),
        ("[-Infinity]", "-Infinity is not a number JSON allows"),
        ('{"score": 0.9, "score": 0.1}', "key 'score' appears more than once in an object"),
        ('[{"a": {"b": 1, "c": {"b": 1}}}, {"k": [], "k": []}]', "key 'k' appears more than once"),
    ],
)
def test_refused_with_what_and_where(text, message):
    with pytest.raises(JSONInputError) as refused:
        safe_json.loads(text)
    assert message in refused.value.msg
    assert isinstance(refused.value, json.JSONDecodeError)  # importers' existing handlers report it


def test_the_position_points_at_the_problem():
    with pytest.raises(JSONInputError) as refused:
        safe_json.loads('{"a": 1,\n "b": "x\\ud800"}')
    assert (refused.value.lineno, refused.value.colno) == (2, 9)  # the backslash of \\ud800


def test_a_key_named_twice_is_refused_where_its_object_starts():
    """``json`` keeps the last of two equal keys silently (a metric score file's record with two ``"system"``
    fields was stored for the second); every reader of untrusted JSON now refuses it, and says where."""
    with pytest.raises(JSONInputError) as refused:
        safe_json.loads('[\n  {"system": "A", "score": 1},\n  {"system": "A",\n   "score": 1, "system": "B"}\n]')
    assert (refused.value.lineno, refused.value.colno) == (3, 3)
    # a caller with its own hook decides itself (the JSONL readers report the key with their line)
    with pytest.raises(safe_json.DuplicateKey):
        safe_json.loads('{"a": 1, "a": 2}', object_pairs_hook=safe_json.no_duplicate_keys)
    assert safe_json.loads('{"a": 1, "a": 2}', object_pairs_hook=dict) == {"a": 2}


def test_ordinary_json_is_read_as_json_reads_it():
    text = '{"a": [1, -2.5e3, "\\ud83d\\ude00", null, true], "b": {"c": "\\u00e9"}, "n": 12345678901234567890}'
    assert safe_json.loads(text) == json.loads(text)
    assert safe_json.loads(("[" * 32) + ("]" * 32)) == json.loads(("[" * 32) + ("]" * 32))
    assert safe_json.loads(b'{"a": 1}') == {"a": 1}
    with pytest.raises(JSONInputError, match="not UTF-8"):
        safe_json.loads(b'{"a": "\xff"}')


def test_limits_come_from_settings(settings):
    settings.CAPTIONEVAL_JSON_MAX_DEPTH = 3
    settings.CAPTIONEVAL_JSON_MAX_NUMBER_LENGTH = 5
    assert safe_json.loads("[[[1]]]") == [[[1]]]
    with pytest.raises(JSONInputError, match="nested more than 3"):
        safe_json.loads("[[[[1]]]]")
    with pytest.raises(JSONInputError, match="a number of 6 characters"):
        safe_json.loads("123456")


def views(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from views(pattern.url_patterns)
        else:
            callback = pattern.callback
            yield pattern, getattr(callback, "cls", None) or getattr(callback, "view_class", None)


def test_every_api_view_reads_json_through_the_safe_parser():
    api_views = [(p, cls) for p, cls in views(get_resolver().url_patterns) if cls and issubclass(cls, APIView)]
    assert len(api_views) > 20
    for pattern, cls in api_views:
        parsers = cls().get_parsers() if hasattr(cls, "get_parsers") else []
        plain = [type(p).__name__ for p in parsers if isinstance(p, JSONParser) and not isinstance(p, SafeJSONParser)]
        assert not plain, f"{pattern.pattern} ({cls.__name__}) parses JSON with {plain}"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        b"[" * 50000 + b"]" * 50000,
        b'{"name": "x", "n": 1' + b"0" * 5000 + b"}",
        b'{"name": "\\ud800"}',
        b'{"name": "a\\u0000"}',
        b'{"name": "x", "name": "y"}',
    ],
)
def test_staff_endpoints_answer_400(staff_client, body):
    from assessment.models import Campaign

    response = staff_client.post("/api/da/campaigns/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert response.json()["detail"].startswith("JSON parse error")
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"type": "video", "video_id": "v\\u0000"}', "holds a NUL character"),
        ('{"type": "video", "video_id": "\\udfff"}', "lone UTF-16 surrogate"),
        ('{"type": "video", "video_id": "v", "x": ' + "[" * 40 + "]" * 40 + "}", "nested more than 32"),
        ('{"type": "video", "video_id": "v", "duration": 1' + "0" * 400 + "}", "a number of 401 characters"),
    ],
)
def test_jsonl_import_names_file_and_line(line, message):
    text = '{"type": "video", "video_id": "ok"}\n' + line + "\n"
    with pytest.raises(FormatError) as refused:
        jsonl.read(text, filename="data.jsonl")
    [problem] = [str(p) for p in refused.value.problems]
    assert problem.startswith("data.jsonl, line 2") and message in problem


# --- the source tree ----------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
READS_JSON = re.compile(r"(?<![\w.])json\.loads?\s*\(|from json import (?:.*\b)?loads?\b")


def test_no_code_reads_json_except_through_the_safe_reader():
    """Two MTurk results readers (the factuality sentences cell, a task's JSON answers) used Python's json on
    what workers sent: a deep cell was a RecursionError, a 500. JSON that comes from outside is read with
    ``safe_json.loads``; only the reader itself calls ``json.loads``."""
    offenders = []
    for folder in ("annotation_site", "assessment", "metrics_eval"):
        for path in (REPO / folder).rglob("*.py"):
            relative = path.relative_to(REPO).as_posix()
            if relative == "annotation_site/safe_json.py" or "/migrations/" in relative:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if READS_JSON.search(line):
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "read JSON through annotation_site.safe_json.loads:\n" + "\n".join(offenders)
