"""MTurk file formats: ExternalQuestion XML (checked against the schema's shape), batch input CSV, results CSV
parsing (per-field answers and taskAnswers JSON; refused whole with every bad line named) and the
Approve/Reject upload CSV."""

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from annotation_site.crowd import mturk_formats as fmt

HEADER = (
    "HITId,HITTypeId,Title,AssignmentId,WorkerId,AssignmentStatus,AcceptTime,SubmitTime,WorkTimeInSeconds,"
    "Input.hit_url,Answer.score,Approve,Reject"
)


def results(*rows, header=HEADER):
    return "\n".join([header, *rows]) + "\n"


def test_external_question_xml():
    xml = fmt.external_question("https://lab.example/crowd/s/abc/?unit=3&x=1")
    root = ET.fromstring(xml)
    ns = {"q": fmt.EXTERNAL_QUESTION_NS}
    assert root.tag == f"{{{fmt.EXTERNAL_QUESTION_NS}}}ExternalQuestion"
    assert root.find("q:ExternalURL", ns).text == "https://lab.example/crowd/s/abc/?unit=3&x=1"
    assert root.find("q:FrameHeight", ns).text == "0"
    assert "&amp;" in xml  # escaped in the XML text
    with pytest.raises(ValueError):
        fmt.external_question("http://lab.example/")


def test_batch_input_csv():
    text = fmt.batch_input_csv(
        [{"hit_id": "1", "hit_url": "https://x/?unit=1"}, {"hit_id": "2", "hit_url": "https://x/?unit=2,3"}],
        ["hit_id", "hit_url"],
    )
    assert list(csv.DictReader(io.StringIO(text))) == [
        {"hit_id": "1", "hit_url": "https://x/?unit=1"},
        {"hit_id": "2", "hit_url": "https://x/?unit=2,3"},
    ]


def test_results_with_per_field_answers():
    rows = fmt.parse_results(
        results("H1,T,t,A1,W1,Submitted,x,y,120,u,73,,", 'H1,T,t,A2,W2,Approved,x,y,99,u,"12",,'),
        answer_fields=["score"],
    )
    assert [(r.line, r.assignment_id, r.worker_id, r.status, r.work_seconds, r.answers) for r in rows] == [
        (2, "A1", "W1", "Submitted", 120, {"score": "73"}),
        (3, "A2", "W2", "Approved", 99, {"score": "12"}),
    ]
    assert rows[0].inputs == {"hit_url": "u"}


def test_results_give_back_the_batch_inputs_as_the_platform_wrote_them():
    """MTurk copies the batch input CSV's cells into the results' Input.* columns, formula guard included: a unit
    labelled -AwyG1JcMp8 (a YouCook2 video id) came back as '-AwyG1JcMp8 and matched no video."""
    batch = fmt.batch_input_csv(
        [{"hit_id": "-k1", "hit_label": "-AwyG1JcMp8", "hit_url": "https://x/?unit=-k1"}],
        ["hit_id", "hit_label", "hit_url"],
    )
    inputs = next(csv.DictReader(io.StringIO(batch)))
    assert inputs["hit_label"] == "'-AwyG1JcMp8"  # the guard, as MTurk receives and copies it
    header = "HITId,AssignmentId,WorkerId,AssignmentStatus,Input.hit_id,Input.hit_label,Input.hit_url"
    rows = fmt.parse_results(results(f"H1,A1,W1,Submitted,{','.join(inputs.values())}", header=header))
    assert rows[0].inputs == {"hit_id": "-k1", "hit_label": "-AwyG1JcMp8", "hit_url": "https://x/?unit=-k1"}


def test_results_with_task_answers_json():
    header = "HITId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Answer.taskAnswers"
    text = results('H1,A1,W1,Submitted,10,"[{""score"": 55, ""rationale"": ""fine""}]"', header=header)
    rows = fmt.parse_results(text, answer_fields=["score"])
    assert rows[0].answers == {"score": "55", "rationale": "fine"}


def test_a_malformed_file_is_refused_whole_with_line_numbers():
    text = results(
        "H1,T,t,A1,W1,Submitted,x,y,120,u,73,,",
        "H1,T,t,,W2,Submitted,x,y,120,u,73,,",  # line 3: no AssignmentId
        "H2,T,t,A3,W3,Done,x,y,-4,u,,,",  # line 4: bad status, seconds, missing answer
        "H2,T,t,A1,W4,Submitted,x,y,5,u,7,x,bad work",  # line 5: repeated assignment, Approve and Reject
        "H2,T,t,A5,W5,Submitted",  # line 6: short row
    )

    def score_in_range(answers):
        value = answers.get("score", "")
        return [] if value == "" or value.isdigit() and 0 <= int(value) <= 100 else [("score", "not 0-100")]

    with pytest.raises(fmt.FormatError) as refused:
        fmt.parse_results(text, filename="batch.csv", answer_fields=["score"], validate_answers=score_in_range)
    problems = refused.value.problems
    assert problems == [
        "batch.csv, line 3, field 'AssignmentId': empty",
        "batch.csv, line 4, field 'AssignmentStatus': 'Done' is not one of Submitted, Approved, Rejected",
        "batch.csv, line 4, field 'WorkTimeInSeconds': '-4' is not a whole number of seconds",
        "batch.csv, line 4, field 'Answer.score': missing answer",
        "batch.csv, line 5, field 'AssignmentId': A1 already on line 2",
        "batch.csv, line 5, field 'Reject': both Approve and Reject are filled",
        "batch.csv, line 6: 6 values for 13 columns",
    ]
    assert "nothing was imported" in str(refused.value)


def test_not_a_results_file():
    with pytest.raises(fmt.FormatError, match="missing columns HITId, AssignmentId"):
        fmt.parse_results("worker_id,score\nW1,3\n")
    with pytest.raises(fmt.FormatError, match="empty"):
        fmt.parse_results("")


def test_ids_mturk_cannot_issue_are_refused():
    """An AssignmentId or HITId that is not MTurk's (1 to 64 capital letters and digits) is a problem of its line.
    Before, one beginning with a single quote was read, and the written Approve / Reject file gave it back as
    ''... (the formula escape of every CSV the platform writes): MTurk could not have matched that row."""
    text = results(
        "3HX,T,t,3AX,W1,Submitted,x,y,120,u,73,,",
        "3HX,T,t,'3AY,W2,Submitted,x,y,120,u,73,,",  # line 3
        "=1+1,T,t,3AZ,W3,Submitted,x,y,120,u,73,,",  # line 4
        f"3HX,T,t,{'A' * 65},W4,Submitted,x,y,120,u,73,,",  # line 5: longer than MTurk's 64
        "3hx,T,t,3a\u00c9,W5,Submitted,x,y,120,u,73,,",  # line 6: small letters, a letter outside A-Z
    )
    with pytest.raises(fmt.FormatError) as refused:
        fmt.parse_results(text, filename="batch.csv")
    assert refused.value.problems == [
        "batch.csv, line 3, field 'AssignmentId': \"'3AY\" is not an MTurk id (1 to 64 capital letters and digits)",
        "batch.csv, line 4, field 'HITId': '=1+1' is not an MTurk id (1 to 64 capital letters and digits)",
        f"batch.csv, line 5, field 'AssignmentId': '{'A' * 65}' is not an MTurk id (1 to 64 capital letters and digits)",
        "batch.csv, line 6, field 'HITId': '3hx' is not an MTurk id (1 to 64 capital letters and digits)",
        "batch.csv, line 6, field 'AssignmentId': '3a\u00c9' is not an MTurk id (1 to 64 capital letters and digits)",
    ]
    assert [row.assignment_id for row in refused.value.rows] == ["3AX"]
    with pytest.raises(fmt.FormatError, match="no approve / reject file was written"):
        fmt.approve_reject_csv(text, {"'3AY": ("approve", "")})


def test_the_written_file_gives_the_ids_back_as_mturk_issued_them():
    """Spaces or a tab around an id are read as the id; the written file holds the id alone (a tab in front was
    written '\\t3HX, the formula escape, which is no MTurk id)."""
    text = results("\t3HX ,T,t, 3AX\t,W1,Submitted,x,y,120,u,73,,")
    rows = list(csv.DictReader(io.StringIO(fmt.approve_reject_csv(text, {"3AX": ("approve", "")}))))
    assert [(r["HITId"], r["AssignmentId"], r["Approve"]) for r in rows] == [("3HX", "3AX", "x")]


def test_approve_reject_csv_round_trip():
    text = results(
        "H1,T,t,A1,W1,Submitted,x,y,120,u,73,,",
        "H1,T,t,A2,W2,Submitted,x,y,99,u,12,,",
        "H2,T,t,A3,W3,Submitted,x,y,99,u,50,,",
    )
    out = fmt.approve_reject_csv(text, {"A1": ("approve", ""), "A2": ("reject", "Failed the hidden checks.")})
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["AssignmentId"], r["Approve"], r["Reject"]) for r in rows] == [
        ("A1", "x", ""),
        ("A2", "", "Failed the hidden checks."),
        ("A3", "", ""),
    ]
    parsed = fmt.parse_results(out)
    assert [(r.approve, r.reject) for r in parsed] == [(True, ""), (False, "Failed the hidden checks."), (False, "")]


# --- through a study (toy protocol) ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_round_trip_export_import_approve_reject(toy, client, staff_user):
    from django.urls import reverse

    from annotation_site.crowd import mturk_import, payments, studies
    from annotation_site.crowd.models import Participation, Policy, Study

    from .conftest import FAILED, PASSED

    target = toy.add("mt", [("1", 2), ("2", 2)])
    study = Study.objects.create(
        name="mt", provider="mturk", protocol="toy", object_id=target.object_id, target_name="mt", status="published"
    )
    batch, _ = studies.mturk_batch(study)
    hits = list(csv.DictReader(io.StringIO(batch)))
    assert [(h["hit_id"], h["assignments"]) for h in hits] == [("1", "2"), ("2", "2")]
    assert all("/crowd/s/" in h["hit_url"] and h["hit_url"].endswith(f"?unit={h['hit_id']}") for h in hits)
    header = "HITId,HITTypeId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.hit_id,Answer.score"
    results_text = results(
        "3HIT1,T,ASSIGN1,WORKERA,Submitted,300,1,80",
        "3HIT1,T,ASSIGN2,WORKERB,Submitted,200,1,20",
        "3HIT2,T,ASSIGN3,WORKERA,Submitted,250,2,75",
        header=header,
    )
    assert mturk_import.import_results(study, results_text) == {"rows": 3, "created": 3, "unchanged": 0, "warnings": []}
    assert mturk_import.import_results(study, results_text) == {"rows": 3, "created": 0, "unchanged": 3, "warnings": []}
    assert toy.imported == 3 and Participation.objects.count() == 3
    toy.targets["mt"].qc.update({"mturk:WORKERA": PASSED, "mturk:WORKERB": FAILED})
    payments.record(target, payments.preview(toy, target, policy=Policy.APPROVE_PASSING), policy=Policy.APPROVE_PASSING)
    upload = mturk_import.approve_reject_file(study, results_text)
    decided = {r["AssignmentId"]: (r["Approve"], r["Reject"][:20]) for r in csv.DictReader(io.StringIO(upload))}
    assert decided == {"ASSIGN1": ("x", ""), "ASSIGN2": ("", "Your ratings did not"), "ASSIGN3": ("x", "")}
    # a malformed file through the page: refused whole, every line named, nothing written
    broken = results(
        "3HIT1,T,ASSIGN9,WORKERC,Submitted,300,1,101",
        "3HIT1,T,ASSIGN10,WORKERD,Submitted,x,1,50",
        "3HIT1,T,ASSIGN11,WORKERE,Submitted,30,7,50",
        header=header,
    )
    client.force_login(staff_user)
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = client.post(
        reverse("crowd-mturk-file", args=["mt"]),
        {"action": "import", "file": SimpleUploadedFile("batch.csv", broken.encode())},
    )
    assert page.status_code == 400
    text = page.content.decode()
    assert "batch.csv, line 2, field &#x27;Answer.score&#x27;: &#x27;101&#x27; is not 0-100" in text
    assert "batch.csv, line 3, field &#x27;WorkTimeInSeconds&#x27;" in text
    assert (
        "batch.csv, line 4, field &#x27;Input.hit_id&#x27;: unknown HIT &#x27;7&#x27;" in text
    )  # the protocol's check
    assert Participation.objects.count() == 3


@pytest.mark.django_db
def test_the_crowd_mturk_command(toy, tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from annotation_site.crowd.models import Study

    target = toy.add("mtc", [("1", 1)])
    Study.objects.create(
        name="mtc", provider="mturk", protocol="toy", object_id=target.object_id, target_name="mtc", status="published"
    )
    batch = tmp_path / "batch.csv"
    call_command("crowd_mturk", "export", "--study", "mtc", "--out", str(batch), stdout=StringIO(), stderr=StringIO())
    assert batch.read_text().startswith("hit_id,hit_label,assignments,hit_url\n1,")
    results_file = tmp_path / "results.csv"
    results_file.write_text(
        results(
            "3H,T,A1,W1,Submitted,30,1,70",
            header="HITId,HITTypeId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.hit_id,Answer.score",
        )
    )
    out = StringIO()
    call_command("crowd_mturk", "import", str(results_file), "--study", "mtc", stdout=out)
    assert '"created": 1' in out.getvalue()
    results_file.write_text(
        results(
            "3H,T,A2,W2,Submitted,30,1,700",
            header="HITId,HITTypeId,AssignmentId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.hit_id,Answer.score",
        )
    )
    with pytest.raises(CommandError, match="results.csv, line 2, field 'Answer.score'"):
        call_command("crowd_mturk", "import", str(results_file), "--study", "mtc", stdout=StringIO())


def test_approve_reject_refuses_what_is_not_a_well_formed_results_file():
    """The Approve / Reject file is written from an uploaded results file: a file that is not one, or a row whose
    values do not match its columns, is refused whole with file and line, not written back with a crash (an empty
    file, no AssignmentId column) or with values shifted under the wrong columns (a row with extra values)."""
    extra = results("H1,T,t,A1,W1,Submitted,x,y,120,u,73,,,surplus")
    cases = {
        "": "results.csv, line 1: the file is empty",
        "worker_id,score\nW1,3\n": "results.csv, line 1: missing columns HITId, AssignmentId, WorkerId, AssignmentStatus",
        extra: "results.csv, line 2: 14 values for 13 columns",
        'HITId,AssignmentId,WorkerId,AssignmentStatus\n"H1,A1,W1,Submitted\n': "results.csv, line 2",
    }
    for text, problem in cases.items():
        with pytest.raises(fmt.FormatError) as refused:
            fmt.approve_reject_csv(text, {"A1": ("approve", "")})
        assert refused.value.problems[0].startswith(problem), (text, refused.value.problems)


@pytest.mark.django_db
def test_a_malformed_file_for_approve_reject_is_refused_by_the_page_the_api_and_the_command(
    toy, staff_client, tmp_path
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import CommandError, call_command
    from django.urls import reverse

    from annotation_site.crowd.models import Study

    target = toy.add("mtr", [("1", 1)])
    Study.objects.create(
        name="mtr", provider="mturk", protocol="toy", object_id=target.object_id, target_name="mtr", status="published"
    )
    broken = "HITId,WorkerId\n3H,W1\n"  # no AssignmentId: nothing to put a decision on

    page = staff_client.post(
        reverse("crowd-mturk-file", args=["mtr"]),
        {"action": "approve-reject", "file": SimpleUploadedFile("batch.csv", broken.encode())},
    )
    assert page.status_code == 400
    assert "No approve / reject file was written" in page.content.decode()
    assert "batch.csv, line 1: missing columns AssignmentId, AssignmentStatus" in page.content.decode()

    api = staff_client.post(
        reverse("api-crowd-study-action", args=["mtr", "approve-reject"]),
        {"file": SimpleUploadedFile("batch.csv", broken.encode())},
    )
    assert api.status_code == 400
    assert api.json()["detail"] == "1 problem found, no approve / reject file was written:"
    assert api.json()["problems"] == [
        "batch.csv, line 1: missing columns AssignmentId, AssignmentStatus (is this an MTurk batch results file?)"
    ]

    path = tmp_path / "batch.csv"
    path.write_text(broken)
    with pytest.raises(CommandError, match="batch.csv, line 1: missing columns AssignmentId") as refused:
        call_command("crowd_mturk", "approve-reject", str(path), "--study", "mtr", "--out", str(tmp_path / "o.csv"))
    assert "no approve / reject file was written" in str(refused.value)
    assert "imported" not in str(refused.value)

    latin1 = "HITId,AssignmentId\n3H,caf\u00e9\n".encode("latin-1")  # not UTF-8: refused before it is read
    api = staff_client.post(
        reverse("api-crowd-study-action", args=["mtr", "approve-reject"]),
        {"file": SimpleUploadedFile("batch.csv", latin1)},
    )
    assert api.status_code == 400 and api.json()["detail"].endswith("; no approve / reject file was written")
    page = staff_client.post(
        reverse("crowd-mturk-file", args=["mtr"]),
        {"action": "approve-reject", "file": SimpleUploadedFile("batch.csv", latin1)},
        follow=True,
    )
    shown = [str(m) for m in page.context["messages"]]
    assert len(shown) == 1 and shown[0].endswith("; no approve / reject file was written.")
    path.write_bytes(latin1)
    with pytest.raises(CommandError, match="; no approve / reject file was written$"):
        call_command("crowd_mturk", "approve-reject", str(path), "--study", "mtr", "--out", str(tmp_path / "o.csv"))
    assert not (tmp_path / "o.csv").exists()
    assert not (tmp_path / "o.csv").exists()
