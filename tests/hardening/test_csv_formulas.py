"""No CSV the platform writes can run a spreadsheet formula (issue #11, "Spreadsheet formulas").

- the helper (``annotation_site.spreadsheet_csv``): what is neutralised, numbers left alone, the round trip;
- the source tree: no code outside the helper writes CSV itself, so a new export cannot forget it;
- every CSV download and export, fed with hostile names (worker ids, systems, videos, metric names, reasons):
  no cell of what it answers begins with a formula character unless it is a plain number.
"""

import csv
import io
import re
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import URLResolver, get_resolver

from annotation_site import spreadsheet_csv
from annotation_site.spreadsheet_csv import FORMULA_STARTS, neutralise, restore

REPO = Path(__file__).resolve().parents[2]
PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def assert_no_formula(text, *, must_contain=()):
    """Every cell of ``text`` (a CSV document) is inert in a spreadsheet; ``must_contain`` are neutralised
    values that must be present (so the check cannot pass on a file without the hostile data)."""
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert cells, "an empty file proves nothing"
    dangerous = [c for c in cells if c[:1] in FORMULA_STARTS and not PLAIN_NUMBER.match(c)]
    assert not dangerous, f"cells a spreadsheet would run: {dangerous[:5]}"
    for value in must_contain:
        assert neutralise(value) in cells, f"{value!r} is missing (as {neutralise(value)!r})"


# --- the helper ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "=1+1",
        "+1+2",
        "-1+2",
        "@SUM(A1)",
        "\t=1",
        "\r=1",
        "-",
        "=",
        "-inf",
        "-A1",
        '=HYPERLINK("http://x","y")',
        "-2+3+cmd|' /C calc'!A0",
    ],
)
def test_formula_starts_are_quoted(value):
    assert neutralise(value) == "'" + value
    assert restore(neutralise(value)) == value


@pytest.mark.parametrize(
    "value",
    [
        -1,
        -0.25,
        Decimal("-1.50"),
        0,
        None,
        True,
        "-3",
        "+1.5",
        "-2e-3",
        "-.5",
        "abc",
        "",
        " =not at start",
        "a=b",
        "1-2",
    ],
)
def test_numbers_and_harmless_text_are_unchanged(value):
    assert neutralise(value) is value or neutralise(value) == value


def test_quote_prefixed_text_round_trips():
    for value in ("'x", "''", "'=1", "'"):
        assert neutralise(value) == "'" + value and restore(neutralise(value)) == value
    assert restore("'abc") == "'abc"  # not something we wrote: left alone


def test_non_ascii_digits_are_not_plain_numbers():
    assert neutralise("-\u0661\u0662") == "'-\u0661\u0662"  # Arabic-Indic digits: text, not a number


def test_writers_and_frames():
    import pandas as pd

    out = io.StringIO()
    spreadsheet_csv.writer(out).writerow(["=a", -1.5, "-2", "x,y"])
    assert out.getvalue() == '\'=a,-1.5,-2,"x,y"\n'
    out = io.StringIO()
    writer = spreadsheet_csv.DictWriter(out, fieldnames=["a", "b"])
    writer.writeheader()
    writer.writerow({"a": "@x", "b": -3})
    assert out.getvalue() == "a,b\n'@x,-3\n"
    frame = pd.DataFrame({"name": ["+x", "y"], "value": [-1.0, 2.0]})
    assert spreadsheet_csv.frame_to_csv(frame) == "name,value\n'+x,-1.0\ny,2.0\n"
    assert "".join(spreadsheet_csv.stream(["h"], [["=1"], [2]])) == "h\n'=1\n2\n"


# --- the source tree ----------------------------------------------------------------------------------------

WRITES_CSV = re.compile(r"(?<![\w.])csv\.(?:writer|DictWriter)\s*\(|\.to_csv\s*\(|from csv import")
HELPER = "annotation_site/spreadsheet_csv.py"
# the digest of the data a report was computed from: hashed, never written to a file
DIGEST = ("metrics_eval/reports.py", "_digest(data.to_csv(")


def test_no_code_writes_csv_except_through_the_helper():
    offenders = []
    for folder in ("annotation_site", "assessment", "metrics_eval", "benchmarks"):
        for path in (REPO / folder).rglob("*.py"):
            relative = path.relative_to(REPO).as_posix()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if WRITES_CSV.search(line) and relative != HELPER:
                    if relative == DIGEST[0] and DIGEST[1] in line:
                        continue
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "write CSV through annotation_site.spreadsheet_csv:\n" + "\n".join(offenders)


# --- every CSV download and export -------------------------------------------------------------------------

# Every URL that answers a CSV, with the test below that checks it. A new CSV route fails here until it is added.
CSV_ROUTES = {
    "da/campaigns/<str:name>/captions.csv": "test_da_downloads_and_crowd_ledger",
    "da/campaigns/<str:name>/judgments.csv": "test_da_downloads_and_crowd_ledger",
    "api/da/campaigns/<str:name>/judgments.csv": "test_da_downloads_and_crowd_ledger",
    "crowd/ledger/<str:name>.csv": "test_da_downloads_and_crowd_ledger",
    "crowd/studies/<str:name>/mturk-batch.csv": "test_da_downloads_and_crowd_ledger",
    "metrics/reports/<int:pk>/table.csv": "test_metrics_report_table",
    "tasks/t/<str:name>/download/<str:what>": "test_task_exports (labels.csv, figures.csv)",
}


def routes(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def test_every_csv_route_is_covered_here():
    found = {r for r in routes(get_resolver().url_patterns) if ".csv" in r or "download/<str:what>" in r}
    assert found == set(CSV_ROUTES)


HOSTILE_WORKERS = ['=HYPERLINK("http://evil.example","click")', "+w2", "@w3"]
HOSTILE_SYSTEMS = ["=cmd|' /C calc'!A0", "-ModelB"]
HUMAN = "@refs"


def hostile_judgments_csv():
    lines = ["worker_id,hit_id,item_id,system,video_id,item_type,control_of,score"]

    def row(*cells):
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(cells)  # the attacker's file (plain csv is what they'd use)
        lines.append(out.getvalue())

    for n, worker in enumerate(HOSTILE_WORKERS):
        row(worker, "-h1", "=s1", HOSTILE_SYSTEMS[0], "@vid1", "system", "", 70 - n)
        row(worker, "-h1", "s2", HOSTILE_SYSTEMS[1], "+vid2", "system", "", 40 + n)
        for k in range(10):
            row(worker, "-h1", f"o{k}", HUMAN, f"=v{k}", "original", f"d{k}", 80 + k)
            row(worker, "-h1", f"d{k}", HUMAN, f"=v{k}", "degraded", f"o{k}", 20 + k - 5 * n)
    return "\n".join(lines) + "\n"


@pytest.mark.django_db
def test_da_downloads_and_crowd_ledger(staff_client, tmp_path):
    from annotation_site.crowd.models import Study
    from assessment.csv_import import import_judgments
    from assessment.models import Campaign, Judgment

    source = tmp_path / "hostile.csv"
    source.write_text(hostile_judgments_csv())
    import_judgments("hostile", source)
    captions = staff_client.get("/da/campaigns/hostile/captions.csv")
    assert captions.status_code == 200
    assert_no_formula(captions.content.decode(), must_contain=HOSTILE_SYSTEMS)
    judgments = staff_client.get("/da/campaigns/hostile/judgments.csv")
    text = b"".join(judgments.streaming_content).decode()
    assert_no_formula(text, must_contain=HOSTILE_WORKERS + HOSTILE_SYSTEMS + ["-h1", "=s1", "@vid1"])
    from_api = staff_client.get("/api/da/campaigns/hostile/judgments.csv")
    assert b"".join(from_api.streaming_content).decode() == text  # the API's download is the page's

    # the download imports back to exactly the same judgments (the neutralising quote is undone on import)
    copy = tmp_path / "copy.csv"
    copy.write_text(text)
    import_judgments("copy", copy)

    def judged(name):
        return sorted(
            Judgment.objects.filter(assignment__hit__campaign__name=name).values_list(
                "assignment__worker__external_id",
                "assignment__hit__external_id",
                "item__external_id",
                "item__caption__system__name",
                "item__caption__video__external_id",
                "score",
            )
        )

    assert judged("copy") == judged("hostile") and len(judged("hostile")) == 66
    assert {w for w, *_ in judged("copy")} == set(HOSTILE_WORKERS)

    # payments recorded for the imported campaign: the ledger CSV (page and command) carries the worker ids
    call_command(
        "crowd_payments", "--campaign", "hostile", "--policy", "approve-all", stdout=StringIO(), stderr=StringIO()
    )
    study = Study.objects.get(name="da-hostile-records")
    ledger = staff_client.get(f"/crowd/ledger/{study.name}.csv")
    assert ledger.status_code == 200
    assert_no_formula(ledger.content.decode(), must_contain=HOSTILE_WORKERS)
    out = StringIO()
    call_command("crowd_ledger", "export", "--study", study.name, stdout=out)
    assert_no_formula(out.getvalue(), must_contain=HOSTILE_WORKERS)

    # an MTurk batch of the campaign: HIT ids and labels come from the import
    campaign = Campaign.objects.get(name="hostile")
    Study.objects.create(
        name="hostile-mturk", provider="mturk", protocol="da", object_id=campaign.pk, target_name=campaign.name
    )
    batch = staff_client.get("/crowd/studies/hostile-mturk/mturk-batch.csv")
    assert batch.status_code == 200
    assert_no_formula(batch.content.decode())  # (labels read "HIT -h1"; hostile labels: test_mturk_files)


def test_mturk_files():
    from annotation_site.crowd import mturk_formats

    batch = mturk_formats.batch_input_csv(
        [{"hit_id": "-7", "hit_label": '=HYPERLINK("x")', "assignments": 3, "hit_url": "https://h/=1"}],
        ["hit_id", "hit_label", "assignments", "hit_url"],
    )
    assert_no_formula(batch, must_contain=['=HYPERLINK("x")'])
    assert "-7" in batch  # a plain number stays a number
    results = (
        "HITId,AssignmentId,WorkerId,AssignmentStatus,Input.hit_label,Answer.comment\n"
        'H1,A1,W1,Submitted,=HYPERLINK("x"),@SUM(1)\nH1,A2,W2,Submitted,+1+1,-1+2\n'
    )
    upload = mturk_formats.approve_reject_csv(results, {"A1": ("approve", ""), "A2": ("reject", "=too fast")})
    assert_no_formula(upload, must_contain=["=too fast", "@SUM(1)", "-1+2"])


@pytest.mark.django_db
def test_metrics_report_table(staff_client):
    from metrics_eval import services
    from metrics_eval.models import Metric, Report
    from tests.metrics_eval.conftest import CAPTIONS, import_jsonl, scores_csv, tiny_jsonl

    dataset = import_jsonl(tiny_jsonl(), "tiny")
    rows = [(video, system, score) for video, system, score, _ in CAPTIONS]
    services.import_scores(
        dataset,
        scores_csv(rows, {"good": lambda rng, s: s + rng.normal(scale=0.5), "noise": lambda rng, s: rng.normal()}),
        "scores.csv",
    )
    # metric names are validated (a letter first); labels are free text (stored by whoever computed the scores)
    Metric.objects.filter(name="good").update(label="+good")
    Metric.objects.filter(name="noise").update(label="-noise")
    assert staff_client.get("/metrics/datasets/tiny/").status_code == 200
    report = Report.objects.get()
    text = staff_client.get(f"/metrics/reports/{report.pk}/table.csv").content.decode()
    body = text.split("\n", 1)[1]  # after the "# CaptionEval report" comment line
    assert_no_formula(body, must_contain=["+good", "-noise"])
    out = StringIO()
    call_command("correlate", "--dataset", "tiny", "--format", "csv", stdout=out)
    assert_no_formula(out.getvalue().split("\n", 1)[1], must_contain=["+good", "-noise"])


def test_task_exports():
    from annotation_site.judgment_tasks import exports, reports

    row = {column: "" for column in reports.LABEL_COLUMNS}
    row.update(
        question="=q",
        item_id="@item",
        video_id="-vid+1",
        system="+sys",
        model="=model",
        label="-x",
        answers=3,
        tie=False,
        votes={"=yes": 2, "no": 1},
    )
    assert_no_formula(exports.labels_csv([row]), must_contain=["=q", "@item", "-vid+1", "+sys"])
    report = {
        "questions": [],
        "figures": [
            {"kind": "model_accuracy", "name": "=fig", "question": "@q", "models": {"=model": {"accuracy": -0.5}}}
        ],
    }
    text = exports.figures_csv(report)
    assert_no_formula(text, must_contain=["=fig", "@q", "=model"])
    assert ",-0.5\n" in text  # a negative number stays a number
