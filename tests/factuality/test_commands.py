"""The command-line contracts: factuality_agreement --format json, factuality_labels --export / --import
(validated up front, one transaction, problems named by file, line and field) and factuality_project."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation_site.annotators.models import Annotator
from annotation_site.factuality.models import Assignment, Project, ProjectVideo, SpanJudgment, Submission

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_agreement_json_has_exactly_the_contract_shape(completed):
    out, err = run("factuality_agreement", "--project", "anet-mini", "--format", "json")
    data = json.loads(out)
    assert list(data) == ["paragraph", "sentence", "word"]
    assert list(data["paragraph"]) == ["ordinal", "interval", "units", "annotators"]
    assert list(data["sentence"]) == ["nominal", "units", "annotators"] == list(data["word"])
    assert data["paragraph"]["units"] == 9 and data["word"]["annotators"] == 3
    assert all(
        isinstance(data[level][k], float)
        for level, k in (
            ("paragraph", "ordinal"),
            ("paragraph", "interval"),
            ("sentence", "nominal"),
            ("word", "nominal"),
        )
    )
    assert "warning: paragraph: alpha rests on only 9 units" in err
    words, _ = run("factuality_agreement", "--project", "anet-mini", "--format", "json", "--word-units", "words")
    assert json.loads(words)["word"]["units"] == 84 - 15  # the 15 full stops are not words
    text, _ = run("factuality_agreement", "--project", "anet-mini")
    assert text.startswith("paragraph: ordinal 0.")
    with pytest.raises(CommandError, match="no project"):
        run("factuality_agreement", "--project", "nope", "--format", "json")


def test_raw_labels_export_lines(completed, tmp_path):
    path = tmp_path / "labels.jsonl"
    run("factuality_labels", "--project", "anet-mini", "--export", str(path))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 27  # 3 annotators x 9 captions
    assert list(rows[0]) == ["video_id", "system", "annotator", "paragraph_score", "sentences"]
    assert {r["annotator"] for r in rows} == {"A1", "A2", "A3"}  # anonymised by default
    beta = next(r for r in rows if (r["video_id"], r["system"], r["annotator"]) == ("v1", "Beta", "A1"))
    assert beta == {
        "video_id": "v1",
        "system": "Beta",
        "annotator": "A1",
        "paragraph_score": 1,
        "sentences": [{"error": 1, "spans": [[1, 2], [4, 6]]}],
    }
    real, _ = run("factuality_labels", "--project", "anet-mini", "--export", "-", "--real-ids")
    assert {json.loads(line)["annotator"] for line in real.splitlines()} == {"ann1", "ann2", "ann3"}


def test_raw_labels_round_trip_into_a_new_project(completed, tmp_path):
    path = tmp_path / "labels.jsonl"
    run("factuality_labels", "--project", "anet-mini", "--export", str(path), "--real-ids")
    out, _ = run("factuality_labels", "--project", "copy", "--dataset", "small", "--import", str(path))
    assert "27 labelled captions" in out and "9 submissions from 3 annotators" in out
    project = Project.objects.get(name="copy")
    assert project.dataset.name == "small" and project.annotators_per_video == 3
    assert set(project.systems.values_list("name", flat=True)) == {"Alpha", "Beta", "Gamma"}
    assert list(ProjectVideo.objects.filter(project=project).values_list("assigned", flat=True)) == [3, 3, 3]
    assert set(Annotator.objects.filter(kind="imported").values_list("external_id", flat=True)) == {
        "ann1",
        "ann2",
        "ann3",
    }
    again, _ = run("factuality_labels", "--project", "copy", "--export", "-", "--real-ids")
    assert again == path.read_text()
    anonymous = [run("factuality_labels", "--project", name, "--export", "-")[0] for name in ("anet-mini", "copy")]
    assert anonymous[0] == anonymous[1]
    summary = [
        json.loads(run("factuality_agreement", "--project", name, "--format", "json")[0])
        for name in ("anet-mini", "copy")
    ]
    assert summary[0] == summary[1]
    # importing the same file again stores nothing again: every answer is the annotator's current one
    out, _ = run("factuality_labels", "--project", "copy", "--dataset", "small", "--import", str(path))
    assert "0 submissions from 3 annotators (9 unchanged, not stored again)" in out
    assert Submission.objects.filter(assignment__project=project).count() == 9
    assert Submission.objects.filter(assignment__project=project, is_current=True).count() == 9
    assert Assignment.objects.filter(project=project).count() == 9


def test_labels_exported_with_real_ids_map_back_to_the_same_annotators(completed, tmp_path):
    """A file exported from a project with --real-ids and imported into that project made a second, imported
    annotator of each account (6 annotators, every caption judged twice, agreement inflated). Now each name maps
    back to the project's annotator of that id: the same people, their answers replaced, the agreement as it was."""
    before = json.loads(run("factuality_agreement", "--project", "anet-mini", "--format", "json")[0])
    path = tmp_path / "labels.jsonl"
    run("factuality_labels", "--project", "anet-mini", "--export", str(path), "--real-ids")
    # without saying the file is the project's own export, the ids of its accounts are refused, not taken over
    with pytest.raises(CommandError, match=r"line 1, annotator: 'ann1' is the id of ann1, an annotator of project "):
        run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path))
    assert Submission.objects.filter(assignment__project=completed).count() == 9
    out, _ = run(
        "factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path), "--own-export"
    )
    assert "0 submissions from 3 annotators (9 unchanged, not stored again)" in out  # the same answers
    assert not Annotator.objects.filter(kind="imported").exists()
    current = Submission.objects.filter(assignment__project=completed, is_current=True)
    assert current.count() == 9 and set(current.values_list("annotator__user__username", flat=True)) == {
        "ann1",
        "ann2",
        "ann3",
    }
    assert json.loads(run("factuality_agreement", "--project", "anet-mini", "--format", "json")[0]) == before
    again, _ = run("factuality_labels", "--project", "anet-mini", "--export", "-", "--real-ids")
    assert again == path.read_text()


def _state(project):
    """What an import must not change when it is refused: annotators, assignments, submissions, the counts of
    the project's videos and the agreement."""
    return (
        Annotator.objects.count(),
        Assignment.objects.filter(project=project).count(),
        list(Submission.objects.filter(assignment__project=project).values_list("pk", "is_current").order_by("pk")),
        list(ProjectVideo.objects.filter(project=project).values_list("assigned", flat=True).order_by("pk")),
        run("factuality_agreement", "--project", project.name, "--format", "json")[0],
    )


def _copy_problem(filename, line, name, who):
    return (
        f"{filename}, line {line}, annotator: on each of the 3 videos {name!r} labels, these labels are answers "
        f"{who} gave, already in project anet-mini: this looks like the project's own anonymised download, whose "
        "labels are already here (imported, the same answers would count as another annotator's); to restore "
        "people's labels, import the download with real ids as the project's own export (--own-export, own_export)"
    )


def test_the_projects_anonymised_download_imported_back_is_refused(completed, tmp_path, staff_client):
    """The project page's "Raw labels (JSONL, anonymised)" uploaded back in its "Import raw labels" form was
    accepted (only warnings above the annotators per video): imported annotators A1..A3 held copies of ann1..ann3's
    answers, the progress counted them, and the agreement took them for 6 independent annotators (inflated). Now
    each copy is refused, located (file, line of its first label, annotator), from the command, the page and the
    API, and nothing is written."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    download = staff_client.get(reverse("factuality-export-raw", args=["anet-mini"]))
    assert b'"annotator": "A1"' in download.content
    path = tmp_path / "anet-mini.jsonl"
    path.write_bytes(download.content)
    before = _state(completed)
    with pytest.raises(CommandError) as refused:
        run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path))
    message = str(refused.value)
    assert message.startswith("3 problems found, nothing was imported:")
    for line, name, who in ((1, "A1", "ann1"), (2, "A2", "ann2"), (3, "A3", "ann3")):
        assert _copy_problem("anet-mini.jsonl", line, name, who) in message
    assert _state(completed) == before
    page = staff_client.post(
        reverse("factuality-import-raw", args=["anet-mini"]),
        {"file": SimpleUploadedFile("raw.jsonl", download.content)},
    )
    assert page.status_code == 400 and page.content.decode().count('class="problem"') == 3
    located = _copy_problem("raw.jsonl", 2, "A2", "ann2").split(", annotator: ")[1].replace("'", "&#x27;")
    assert (
        '<td class="num">2</td>\n            <td class="break"><code>annotator</code></td>\n' in page.content.decode()
    )
    assert f'<td class="wrap">{located}</td>' in page.content.decode()
    api = staff_client.post(
        reverse("api-factuality-labels", args=["anet-mini"]),
        {"file": SimpleUploadedFile("api.jsonl", download.content)},
    )
    assert api.status_code == 400 and _copy_problem("api.jsonl", 3, "A3", "ann3") in api.json()["problems"]
    assert _state(completed) == before
    assert not Annotator.objects.filter(kind="imported").exists()
    # the check reads the project's answers once (paragraphs, sentences), whatever the size of the file
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation_site.factuality import raw_labels
    from annotation_site.problems import FormatError

    text = download.content.decode()
    counts = []
    for part in (text, "".join(line + "\n" for line in text.splitlines() if '"v1"' in line and '"A3"' not in line)):
        with CaptureQueriesContext(connection) as queries, pytest.raises(FormatError, match="2 problems|3 problems"):
            raw_labels.import_lines(part, project_name="anet-mini", dataset=completed.dataset)
        counts.append(len(queries))
    assert counts[0] == counts[1]
    # ann1 changes an answer after the download: the file's A1 still repeats what ann1 gave (their earlier answer)
    rows = [json.loads(line) for line in download.content.decode().splitlines()]
    changed = [dict(row, annotator="ann1") for row in rows if row["annotator"] == "A1"]
    changed[0]["paragraph_score"] = 5
    own = tmp_path / "ann1.jsonl"
    own.write_text("".join(json.dumps(row) + "\n" for row in changed))
    run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(own), "--own-export")
    # the changed video: a new current answer, the earlier one kept; ann1's two others are unchanged, not stored
    assert Submission.objects.filter(assignment__project=completed).count() == 10
    with pytest.raises(CommandError) as refused:
        run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path))
    assert _copy_problem("anet-mini.jsonl", 1, "A1", "ann1") in str(refused.value)


def test_a_file_with_the_same_ids_and_other_answers_still_imports(completed, tmp_path):
    """Only copies are refused: a file whose A1..A3 differ from every annotator of the project on one of their
    videos imports (three new annotators), and so does one annotator repeating one annotator's answers on a single
    video (a second person may agree on one video; a copy is refused when it spans two videos or more, or repeats
    two of the project's annotators)."""
    out, _ = run("factuality_labels", "--project", "anet-mini", "--export", "-")
    rows = [json.loads(line) for line in out.splitlines()]
    for row in rows:
        if (row["video_id"], row["system"]) == ("v3", "Gamma"):
            row["paragraph_score"] = row["paragraph_score"] % 5 + 1
    path = tmp_path / "other.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    imported, _ = run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path))
    assert "27 labelled captions" in imported and "9 submissions from 3 annotators" in imported
    assert set(Annotator.objects.filter(kind="imported").values_list("external_id", flat=True)) == {"A1", "A2", "A3"}
    assert Submission.objects.filter(assignment__project=completed, is_current=True).count() == 18
    original = [json.loads(line) for line in out.splitlines()]
    solo = [dict(row, annotator="solo") for row in original if (row["video_id"], row["annotator"]) == ("v1", "A1")]
    path.write_text("".join(json.dumps(row) + "\n" for row in solo))
    agreed, _ = run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path))
    assert "3 labelled captions" in agreed and "1 submissions from 1 annotators" in agreed


def test_a_name_two_annotators_of_the_project_share_is_refused(completed, tmp_path):
    path = tmp_path / "labels.jsonl"
    run("factuality_labels", "--project", "anet-mini", "--export", str(path), "--real-ids")
    # a crowd annotator whose panel id is an account's username, handed a video of the project
    twin = Annotator.objects.create(kind=Annotator.Kind.CROWD, provider="prolific", external_id="ann2")
    Assignment.objects.create(
        project=completed, project_video=completed.project_videos.first(), annotator=twin, shuffle_seed=1
    )
    before = Submission.objects.count()
    with pytest.raises(
        CommandError, match=r"line \d+, annotator: 2 annotators of project anet-mini have the id 'ann2'"
    ):
        run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path), "--own-export")
    assert Submission.objects.count() == before


BAD_LINES = (
    "\n".join(
        [
            json.dumps(
                {
                    "video_id": "v1",
                    "system": "Alpha",
                    "annotator": "x",
                    "paragraph_score": 4,
                    "sentences": [{"error": 0, "spans": []}, {"error": 1, "spans": [[1, 2]]}],
                }
            ),
            json.dumps(
                {
                    "video_id": "v1",
                    "system": "Alpha",
                    "annotator": "y",
                    "paragraph_score": 6,
                    "sentences": [{"error": 0}, {"error": 0}],
                }
            ),
            '{"video_id": "v1", ',
            json.dumps({"video_id": "v9", "system": "Alpha", "annotator": "x", "paragraph_score": 4, "sentences": []}),
            json.dumps(
                {
                    "video_id": "v1",
                    "system": "Beta",
                    "annotator": "x",
                    "paragraph_score": 2,
                    "sentences": [{"error": 0, "spans": [[0, 1]]}],
                }
            ),
            json.dumps(
                {
                    "video_id": "v1",
                    "system": "Beta",
                    "annotator": "y",
                    "paragraph_score": 2,
                    "colour": "red",
                    "sentences": [{"error": 1, "spans": [[0, 99]]}],
                }
            ),
            json.dumps(
                {
                    "video_id": "v1",
                    "system": "Alpha",
                    "annotator": "x",
                    "paragraph_score": 3,
                    "sentences": [{"error": 0}, {"error": 0}],
                }
            ),
            json.dumps(
                {
                    "video_id": "v2",
                    "system": "Alpha",
                    "annotator": "x",
                    "paragraph_score": 3,
                    "sentences": [{"error": 0}],
                }
            ),
        ]
    )
    + "\n"
)


def test_a_bad_file_lists_every_problem_and_imports_nothing(small_dataset, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(BAD_LINES)
    with pytest.raises(CommandError) as refused:
        run("factuality_labels", "--project", "fresh", "--dataset", "small", "--import", str(path))
    message = str(refused.value)
    assert message.startswith("7 problems found, nothing was imported:")
    for expected in [
        "bad.jsonl, line 2, paragraph_score: must be an integer from 1 to 5 (or null), not 6",
        "bad.jsonl, line 3: invalid JSON",
        "bad.jsonl, line 4, video_id: dataset small has no caption of system 'Alpha' for video 'v9'",
        "bad.jsonl, line 5, sentences[0].spans: spans are given but error is 0",
        "bad.jsonl, line 6, colour: unknown field",
        "bad.jsonl, line 7, annotator: annotator 'x' already labelled this caption on line 1",
        "bad.jsonl, line 8, sentences: must list the caption's 2 sentences",
    ]:
        assert expected in message, expected
    assert not Project.objects.exists() and not Submission.objects.exists() and not Annotator.objects.exists()


def test_spans_that_are_not_a_list_are_a_problem_of_their_line(small_dataset, tmp_path):
    """A number as a sentence's spans stopped the import with a TypeError (a traceback; a 500 on the page)."""
    path = tmp_path / "spans.jsonl"
    line = {"video_id": "v1", "system": "Beta", "annotator": "x", "paragraph_score": 2}
    path.write_text(json.dumps({**line, "sentences": [{"error": 1, "spans": 7}]}) + "\n")
    with pytest.raises(CommandError) as refused:
        run("factuality_labels", "--project", "fresh", "--dataset", "small", "--import", str(path))
    assert "spans.jsonl, line 1, sentences[0].spans: spans must be a list of [start, end] pairs, not 7" in str(
        refused.value
    )
    assert not Project.objects.exists() and not Submission.objects.exists()


def test_annotator_ids_are_read_like_every_id_from_outside(small_dataset, tmp_path):
    """An annotator id longer than its column was a database error on PostgreSQL (a traceback; a 500 from the page
    and the API), and ``x`` with a zero-width space or a fullwidth ``x`` became annotators other than ``x``."""
    line = {"system": "Beta", "paragraph_score": 2, "sentences": [{"error": 1, "spans": [[0, 2]]}]}
    path = tmp_path / "ids.jsonl"
    path.write_text(
        "".join(
            json.dumps({**line, "video_id": video, "annotator": who}) + "\n"
            for video, who in (("v1", "x"), ("v1", "\uff58"), ("v2", "a" * 201), ("v2", "x\u200b"))
        )
    )
    with pytest.raises(CommandError) as refused:
        run("factuality_labels", "--project", "fresh", "--dataset", "small", "--import", str(path))
    assert sorted(str(refused.value).splitlines()[1:]) == [
        "ids.jsonl, line 2, annotator: annotator 'x' already labelled this caption on line 1",
        "ids.jsonl, line 3, annotator: the annotator id has 201 characters; at most 200 are allowed",
        "ids.jsonl, line 4, annotator: the annotator id holds an invisible or control character (ZERO WIDTH SPACE, "
        "U+200B); type it again without it",
    ]
    assert not Project.objects.exists() and not Annotator.objects.exists()
    path.write_text(
        "".join(
            json.dumps({**line, "video_id": video, "annotator": who}) + "\n"
            for video, who in (("v1", " x "), ("v2", "\uff58"))
        )
    )
    run("factuality_labels", "--project", "fresh", "--dataset", "small", "--import", str(path))
    assert list(Annotator.objects.values_list("external_id", flat=True)) == ["x"]
    assert Submission.objects.count() == 2


@pytest.mark.parametrize("error", [1.0, True, "1"])
def test_a_sentence_flag_is_the_number_0_or_1(small_dataset, tmp_path, error):
    """``"error": 1.0`` was read as a flag (1.0 == 1): numbers are read strictly everywhere else."""
    path = tmp_path / "flag.jsonl"
    line = {"video_id": "v1", "system": "Beta", "annotator": "x", "paragraph_score": 2}
    path.write_text(json.dumps({**line, "sentences": [{"error": error, "spans": [[0, 1]]}]}) + "\n")
    with pytest.raises(CommandError, match=r"flag.jsonl, line 1, sentences\[0\]: must be \{\"error\": 0 or 1"):
        run("factuality_labels", "--project", "fresh", "--dataset", "small", "--import", str(path))
    assert not Submission.objects.exists()


def test_import_into_an_existing_project_checks_its_videos_and_dataset(make_project, small_dataset, tmp_path):
    make_project(name="only-v1", videos=["v1"], systems=["Alpha"])
    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps(
            {
                "video_id": "v1",
                "system": "Beta",
                "annotator": "x",
                "paragraph_score": 2,
                "sentences": [{"error": 1, "spans": [[1, 2]]}],
            }
        )
        + "\n"
    )
    with pytest.raises(CommandError, match="not part of project only-v1"):
        run("factuality_labels", "--project", "only-v1", "--dataset", "small", "--import", str(path))
    from .conftest import import_jsonl, lines

    import_jsonl(lines({"video_id": "v1", "system": "Beta", "sentences": ["a b ."]}), "other")
    with pytest.raises(CommandError, match="exists on dataset small, not other"):
        run("factuality_labels", "--project", "only-v1", "--dataset", "other", "--import", str(path))
    with pytest.raises(CommandError, match="needs --dataset"):
        run("factuality_labels", "--project", "only-v1", "--import", str(path))


def test_import_keeps_spans_and_incomplete_answers(small_dataset, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps(
            {
                "video_id": "v2",
                "system": "Beta",
                "annotator": "lab-7",
                "paragraph_score": None,
                "sentences": [{"error": 1, "spans": [[0, 2], [3, 4]]}],
            }
        )
        + "\n"
    )
    run("factuality_labels", "--project", "outside", "--dataset", "small", "--import", str(path))
    submission = Submission.objects.get()
    assert submission.source == "import" and submission.confirmed_incomplete and submission.video_played is None
    assert sorted(SpanJudgment.objects.values_list("start", "end")) == [(0, 2), (3, 4)]
    exported, _ = run("factuality_labels", "--project", "outside", "--export", "-", "--real-ids")
    assert json.loads(exported) == json.loads(path.read_text())


def test_project_command_creates_invites_aggregates_and_closes(small_dataset, django_user_model):
    django_user_model.objects.create_user("known", password="pw-known-123")
    out, _ = run(
        "factuality_project",
        "create",
        "--name",
        "cli",
        "--dataset",
        "small",
        "--systems",
        "Alpha",
        "Beta",
        "--per-video",
        "2",
        "--annotators",
        "known",
        "newcomer",
        "--base-url",
        "https://lab.example",
    )
    assert "Created project cli: 3 videos, 2 systems" in out
    assert "Invited known (active account: they log in)\n" in out
    assert "Invited newcomer (new account): https://lab.example/factuality/invitations/" in out
    project = Project.objects.get(name="cli")
    assert project.annotators_per_video == 2 and project.members.count() == 2
    out, _ = run("factuality_project", "aggregate", "--name", "cli")
    assert "Label set 'cli': 0 captions" in out
    run("factuality_project", "close", "--name", "cli")
    assert Project.objects.get(name="cli").status == "closed"
    with pytest.raises(CommandError, match="already exists"):
        run("factuality_project", "create", "--name", "cli", "--dataset", "small")


def _beta_v1(annotator, score=3):
    line = {"video_id": "v1", "system": "Beta", "annotator": annotator, "paragraph_score": score}
    return json.dumps({**line, "sentences": [{"error": 0}]}) + "\n"


def test_an_import_above_the_annotators_per_video_says_so_and_keeps_the_labels(make_project, tmp_path, staff_client):
    """A raw-labels import raised a video's assigned count above the project's annotators per video without a
    word; the labels are kept (they were collected), and the command, the page and the API say which video, from
    which line of the file."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    make_project(name="pair", videos=["v1"], systems=["Beta"], annotators_per_video=2)
    path = tmp_path / "three.jsonl"
    path.write_text(_beta_v1("a") + _beta_v1("b") + _beta_v1("c"))
    out, err = run("factuality_labels", "--project", "pair", "--dataset", "small", "--import", str(path))
    assert "Imported 3 labelled captions" in out
    assert err.strip() == (
        "Warning: three.jsonl, line 3, annotator: video 'v1' now has 3 annotators, more than the 2 annotators per "
        "video of project pair: its labels were imported all the same, and the video is handed out to nobody else "
        "(raise the project's annotators per video if that is what the study is)"
    )
    assert ProjectVideo.objects.get(project__name="pair").assigned == 3 and Submission.objects.count() == 3
    _, again = run("factuality_labels", "--project", "pair", "--dataset", "small", "--import", str(path))
    assert again == ""  # the same annotators again: nobody new above the capacity
    api = staff_client.post(
        reverse("api-factuality-labels", args=["pair"]),
        {"file": SimpleUploadedFile("d.jsonl", _beta_v1("d").encode())},
    )
    assert api.status_code == 201 and api.json()["warnings"] == [
        "d.jsonl, line 1, annotator: video 'v1' now has 4 annotators, more than the 2 annotators per video of "
        "project pair: its labels were imported all the same, and the video is handed out to nobody else (raise "
        "the project's annotators per video if that is what the study is)"
    ]
    page = staff_client.post(
        reverse("factuality-import-raw", args=["pair"]),
        {"file": SimpleUploadedFile("e.jsonl", _beta_v1("e").encode())},
        follow=True,
    ).content.decode()
    assert (
        "message--warning" in page and "e.jsonl, line 1, annotator: video &#x27;v1&#x27; now has 5 annotators" in page
    )


def test_restoring_a_projects_own_export_keeps_each_answers_time_and_playback(completed, tmp_path):
    """Every line of the project's own export was stored again as a new current answer without time or playback:
    the project page then showed every annotator's median time as 0 s and 'played video' as 0."""
    from annotation_site.factuality import projects

    current = Submission.objects.filter(assignment__project=completed, is_current=True)
    for seconds, submission in enumerate(current.order_by("pk"), start=30):
        Submission.objects.filter(pk=submission.pk).update(time_spent=seconds, video_played=True)

    def shown():
        return sorted(
            (r["annotator"].pk, r["median_seconds"], r["played"]) for r in projects.progress(completed)["annotators"]
        )

    before, kept = shown(), set(current.values_list("pk", flat=True))
    path = tmp_path / "own.jsonl"
    run("factuality_labels", "--project", "anet-mini", "--export", str(path), "--real-ids")
    run("factuality_labels", "--project", "anet-mini", "--dataset", "small", "--import", str(path), "--own-export")
    assert shown() == before and all(seconds for _, seconds, _ in before)
    assert set(current.values_list("pk", flat=True)) == kept
