"""The JSONL format: one caption per line, with line/field located errors and an exact round trip."""

import json

import pytest

from annotation_site.interchange import jsonl
from annotation_site.interchange.bundle import FormatError

GOOD = (
    "\n".join(
        json.dumps(line)
        for line in [
            {"type": "video", "video_id": "v1", "url": "https://www.youtube.com/watch?v=abcdefghijk", "duration": 12.5},
            {"type": "video", "video_id": "v2"},
            {"type": "reference", "video_id": "v1", "reference_set": "gt", "text": "A man cooks."},
            {
                "video_id": "v1",
                "system": "S1",
                "paragraph_score": 3,
                "sentences": [
                    {"text": "a man is cooking pasta .", "error": 1, "spans": [[4, 5]], "timestamp": [0.0, 4.0]},
                    {"text": "he adds salt .", "error": 0, "spans": []},
                ],
            },
            {"video_id": "v2", "system": "S1", "sentences": [{"text": "a dog runs ."}]},
            {"video_id": "v2", "system": "people", "is_human": True, "sentences": [{"text": "A dog runs on grass."}]},
        ]
    )
    + "\n"
)


def test_reads_all_line_kinds():
    bundle = jsonl.read(GOOD)
    assert [v.video_id for v in bundle.videos] == ["v1", "v2"]
    assert bundle.videos[0].duration == 12.5
    assert bundle.systems == [("S1", False), ("people", True)]
    caption = bundle.captions[0]
    assert caption.paragraph_score == 3
    assert caption.sentences[0].tokens == ["a", "man", "is", "cooking", "pasta", "."]
    assert caption.sentences[0].spans == [(4, 5)] and caption.sentences[0].error is True
    assert (caption.sentences[0].start, caption.sentences[0].end) == (0.0, 4.0)
    assert bundle.captions[1].labelled is False


def test_round_trip_is_exact():
    assert jsonl.write(jsonl.read(GOOD)) == GOOD


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])  # (JSON escapes those below U+0020)
def test_a_caption_holding_a_line_separator_of_unicode_round_trips(separator):
    """The export writes such characters raw (ensure_ascii=False); ``str.splitlines`` cut the line there, so the
    platform's own export was refused on import, and every later line number was off by one."""
    text = GOOD.replace("A man cooks.", f"A man cooks.{separator}Then he eats.")
    bundle = jsonl.read(text)
    assert bundle.references[0].text == f"A man cooks.{separator}Then he eats."
    assert jsonl.write(bundle) == text
    broken = text.replace('"system": "people"', '"system": 7')
    with pytest.raises(FormatError) as info:
        jsonl.read(broken + "\r\n{}\r\n")  # CRLF lines count as one line each
    problems = [str(p) for p in info.value.problems]
    assert problems[0].startswith("dataset.jsonl, line 6,") and "system" in problems[0]
    assert problems[-1].startswith("dataset.jsonl, line 8")


def test_spans_imply_error():
    bundle = jsonl.read('{"video_id": "v", "system": "s", "sentences": [{"text": "a b c", "spans": [[0, 1]]}]}')
    assert bundle.captions[0].sentences[0].error is True


@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"video_id": "v", "system": "s", "sentences": []}', "line 1, sentences: sentences must be a non-empty list"),
        (
            '{"video_id": "v", "system": "s", "paragraph_score": 0, "sentences": ["a"]}',
            "line 1, paragraph_score: paragraph_score must be an integer from 1 to 5, not 0",
        ),
        (
            '{"video_id": "v", "system": "s", "sentences": [{"text": "a b", "spans": [[1, 3]]}]}',
            "line 1, sentences[0].spans: span [1, 3] is outside the sentence's 2 tokens",
        ),
        (
            '{"video_id": "v", "system": "s", "sentences": [{"text": "a b", "error": 0, "spans": [[0, 1]]}]}',
            "line 1, sentences[0].error: a sentence with error spans cannot have error 0",
        ),
        ('{"video_id": "v", "sentences": ["a"]}', "line 1, system: system must be a non-empty string, not None"),
        ('{"video_id": "v", "system": "s", "sentences": ["a"], "score": 3}', "line 1, score: unknown field score"),
        ('{"type": "clip", "video_id": "v"}', "line 1, type: type must be video, reference or caption"),
        # a list or an object as the type was a TypeError (unhashable), a 500 from the page and the API
        ('{"type": ["video"], "video_id": "v"}', "line 1, type: type must be video, reference or caption"),
        ('{"type": {}, "video_id": "v"}', "line 1, type: type must be video, reference or caption"),
        ('{"video_id": "v", "system": "s"', "line 1: invalid JSON"),
        ("[1, 2]", "line 1: each line must be a JSON object"),
    ],
)
def test_problems_name_line_and_field(line, expected):
    with pytest.raises(FormatError) as info:
        jsonl.read(line, filename="mine.jsonl")
    assert str(info.value.problems[0]).startswith("mine.jsonl, " + expected)


def test_duplicates_and_unknown_videos_are_reported_with_lines():
    text = "\n".join(
        [
            '{"type": "video", "video_id": "v1"}',
            '{"video_id": "v1", "system": "s", "sentences": ["a"]}',
            "",
            '{"video_id": "v1", "system": "s", "sentences": ["b"]}',
            '{"video_id": "v9", "system": "s", "sentences": ["c"]}',
        ]
    )
    with pytest.raises(FormatError) as info:
        jsonl.read(text, filename="x.jsonl")
    problems = [str(p) for p in info.value.problems]
    assert problems == [
        "x.jsonl, line 4, system: caption of system 's' for video 'v1' already given on line 2",
        "x.jsonl, line 5, video_id: unknown video 'v9': the file declares its videos and not this one",
    ]


def test_sentences_may_be_plain_strings():
    bundle = jsonl.read('{"video_id": "v", "system": "s", "sentences": ["a dog runs .", "it barks ."]}')
    assert [s.tokens for s in bundle.captions[0].sentences] == [["a", "dog", "runs", "."], ["it", "barks", "."]]
    assert all(s.error is None for s in bundle.captions[0].sentences)


def test_a_line_naming_a_field_twice_is_refused():
    """json keeps the last of two equal keys: the score stored was whichever came last, without a word."""
    text = GOOD.replace('"paragraph_score": 3,', '"paragraph_score": 5, "paragraph_score": 1,')
    with pytest.raises(FormatError) as info:
        jsonl.read(text)
    assert [str(p) for p in info.value.problems] == [
        "dataset.jsonl, line 4: key 'paragraph_score' appears more than once"
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"type": "video", "video_id": "v1 "}, "line 1, video_id: video_id 'v1 ' has spaces at its start or end"),
        ({"video_id": "v1", "system": " S", "sentences": ["a ."]}, "line 2, system: system ' S' has spaces"),
        ({"type": "reference", "video_id": "v1", "reference_set": "gt\t", "text": "A."}, "line 2, reference_set:"),
        ({"type": "video", "video_id": " "}, "line 1, video_id: video_id must be a non-empty string"),
    ],
)
def test_ids_with_spaces_around_them_are_refused(line, message):
    """Other importers strip the ids they read: a dataset video 'v1 ' beside 'v1' was one nothing could name."""
    lines = [line] if line.get("type") == "video" else [{"type": "video", "video_id": "v1"}, line]
    with pytest.raises(FormatError) as info:
        jsonl.read("\n".join(json.dumps(x) for x in lines) + "\n")
    assert any(message in str(p) for p in info.value.problems), info.value.problems


def test_lines_ended_by_a_lone_carriage_return_are_lines():
    """Old Mac files end lines with CR alone: str.splitlines read them, and text_lines must too."""
    bundle = jsonl.read(GOOD.replace("\n", "\r"))
    assert [v.video_id for v in bundle.videos] == ["v1", "v2"] and len(bundle.captions) == 3
