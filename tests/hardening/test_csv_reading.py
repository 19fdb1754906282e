"""Every CSV importer reads its file with ``ProblemList.csv_reader``: what the csv module cannot read is a
problem of its file and line, never ``csv.Error`` (a 500 from the page and the API, a traceback from a command).

The importers' property test found it (``test_importers_fuzz.py::test_correct_foil_pair_files``, 2026-11-27): a
carriage return inside the header of a metric pair file was "new-line character seen in unquoted field"; a field
longer than the csv module's limit (131,072 characters) fails the same way in every importer, well inside the
upload size limit.
"""

import csv
import io
import re
from pathlib import Path

import pytest

from annotation_site.demo import services as demo
from annotation_site.interchange.services import import_bundle
from annotation_site.problems import FormatError, ProblemList

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
HUGE = "x" * (csv.field_size_limit() + 1)


@pytest.fixture
def dataset():
    bundle = demo.build_bundle(demo.demo_videos(1))
    return import_bundle(bundle, name="csv", source_format="demo", label_set_name="l").dataset


HEADERS = {
    "scores": "video_id,system,metric,score",
    "pairs": "video_id,correct,foil",
    "judgments": "worker_id,hit_id,item_id,system,video_id,item_type,control_of,score",
}


def scores(dataset, text):
    from metrics_eval.services import import_scores

    import_scores(dataset, text, "scores.csv")


def pairs(dataset, text):
    from metrics_eval.services import import_pairs

    import_pairs(dataset, text, "pairs.csv", pair_set="p")


def judgments(dataset, text):
    from assessment.csv_import import import_judgments

    import_judgments("csv-campaign", io.StringIO(text), "judgments.csv")  # a stream as a caller may open it


@pytest.mark.parametrize("importer", [scores, pairs, judgments])
@pytest.mark.parametrize(
    "row, line",
    [
        ("v1," + HUGE, 2),  # a field over the csv module's limit
        ("v1,\r c", None),  # a carriage return in a field (an error in a stream not opened with newline="")
        (None, None),  # a carriage return in the header: the one the property test found
    ],
)
def test_what_the_csv_module_cannot_read_is_a_problem_of_the_file(dataset, importer, row, line):
    header = HEADERS[importer.__name__]
    text = f"{header}\n{row}\n" if row is not None else header.replace("_id", "_\rid", 1) + "\nv1,a,b\n"
    with pytest.raises(FormatError) as refused:
        importer(dataset, text)
    message = str(refused.value)
    assert f"{importer.__name__}.csv" in message, message
    if line is not None:
        assert f"line {line}: not a readable CSV record (field larger than field limit" in message, message


def test_the_reader_stops_at_the_record_it_cannot_read():
    problems = ProblemList()
    reader = problems.csv_reader("a,b\n1,2\n3," + HUGE + "\n5,6\n", "f.csv")
    assert list(reader) == [["a", "b"], ["1", "2"]]
    assert [str(p) for p in problems] == [
        "f.csv, line 3: not a readable CSV record (field larger than field limit (131072))"
    ]


@pytest.mark.parametrize("importer", [scores, pairs, judgments])
def test_a_nul_character_is_a_problem_of_its_line(dataset, importer):
    """Files read through ``uploads`` never hold a NUL; a CSV importer given text from elsewhere looked a row up
    by a value holding one, which PostgreSQL refuses (found by the importers' property test with 3,000 examples on
    PostgreSQL, 2026-11-27: a DA judgments file, an MTurk results file of a task)."""
    text = f"{HEADERS[importer.__name__]}\nv1,a\x00b,c,1\n"
    with pytest.raises(FormatError) as refused:
        importer(dataset, text)
    assert f"{importer.__name__}.csv, line 2: a NUL character (field 2); NUL is not allowed in text" in str(
        refused.value
    )


def test_a_nul_character_in_mturk_results_is_a_problem_of_its_line():
    from annotation_site.crowd import mturk_formats

    header = "HITId,AssignmentId,WorkerId,AssignmentStatus,Input.item_id"
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_formats.parse_results(f"{header}\n3H,3A,AW1,Submitted,q\x00\n3H,3B,AW2,Submitted,q\n", filename="r.csv")
    assert refused.value.problems == ["r.csv, line 2: a NUL character; NUL is not allowed in text"]
    with pytest.raises(mturk_formats.FormatError, match="r.csv, line 1: a NUL character"):
        mturk_formats.parse_results(f"{header}\x00\n", filename="r.csv")


def test_no_importer_reads_csv_but_through_the_checked_reader():
    offenders = []
    for folder in ("annotation_site", "assessment", "metrics_eval"):
        for path in (REPO / folder).rglob("*.py"):
            relative = path.relative_to(REPO).as_posix()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"csv\.(reader|DictReader)\s*\(", line) and relative not in ALLOWED:
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "read CSV through ProblemList.csv_reader:\n" + "\n".join(offenders)


# The checked reader itself, and the MTurk results reader, which catches csv.Error around each record itself
# (tests/crowd/test_mturk_formats.py) and writes the Approve / Reject file from a file it has just read whole.
ALLOWED = {"annotation_site/problems.py", "annotation_site/crowd/mturk_formats.py"}
