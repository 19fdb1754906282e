"""Property-based tests of every importer (issue #11, "Prove it" 3): a valid file, mutated by hypothesis (lines
deleted, duplicated or cut short, hostile text put anywhere: NUL and control characters, formulas, "1e2", digits of
other scripts, quotes and separators, deep brackets, very long values), is either imported or refused with the
importer's own error naming the file, and a refused file leaves the database exactly as it was. Anything else (a
crash, an IntegrityError, a half-written import) fails the test with the input that caused it.

Each example runs in a transaction that is rolled back afterwards, so examples do not see each other's imports.
"""

import csv
import io
import json
import os
import time

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation_site.problems import FormatError
from tests.hardening.test_uploads import zipped

from .test_boundary_values import nodes, other_kinds, replaced
from .world import World, without_rate_limits

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("CAPTIONEVAL_FUZZ_EXAMPLES", "40"))
HOSTILE = [
    "",
    "\x00",
    "\x1b",
    "\x7f",
    "\u200b",
    "\ufeff",
    "\u202e",
    '=HYPERLINK("http://x")',
    "+1",
    "-1",
    "@x",
    "1e2",
    "NaN",
    "-inf",
    "\u0663",
    "\uff11",
    '"',
    '""',
    ",",
    ";",
    "\t",
    "\r",
    "\n",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    ":",
    "[" * 300,
    '{"a":' * 100,
    "9" * 400,
    "x" * 5000,
    "null",
    "true",
    "\\",
    "\\u0000",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "../../etc/passwd",
    "\u00e9\u0301",
    "\U0001f600",
]


@st.composite
def mutated(draw, text):
    """``text`` with one to three random edits."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "insert", "insert", "delete", "duplicate", "truncate", "swap"]))
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        if kind == "insert":
            position = draw(st.integers(0, len(line)))
            token = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)))
            if draw(st.booleans()) and len(line) > position:  # replace a stretch instead of inserting
                end = draw(st.integers(position, len(line)))
                lines[index] = line[:position] + token + line[end:]
            else:
                lines[index] = line[:position] + token + line[position:]
        elif kind == "delete" and len(lines) > 1:
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, line)
        elif kind == "truncate":
            lines[index] = line[: draw(st.integers(0, len(line)))]
        elif kind == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], line
    return "\n".join(lines)


def table_counts():
    """Rows per table of every model of the project's apps (what a refused import must not change), read in one
    statement."""
    mine = ("corpus", "factuality", "assessment", "judgment_tasks", "metrics_eval", "crowd", "annotators")
    tables = sorted({model._meta.db_table for model in apps.get_models() if model._meta.app_label in mine})
    counts = ", ".join(f"(SELECT COUNT(*) FROM {connection.ops.quote_name(table)})" for table in tables)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}")
        return dict(zip(tables, cursor.fetchone()))


REFUSALS = (FormatError, ValidationError)


def check_importer(sample, run, *, refusals=REFUSALS, filename, inputs=None, each=()):
    """Run ``run(data)`` on ``sample`` (which must import), on what ``inputs`` draws (default: mutations of the
    sample's text) and on every text of ``each``; collect what broke the rules. A refusal must name ``filename``
    (or one of several names). Some inputs must be refused (else they did not reach the importer's checks)."""
    names = (filename,) if isinstance(filename, str) else tuple(filename)
    failures = []
    outcomes = set()
    with transaction.atomic():
        try:
            run(sample)
        except Exception as exc:  # noqa: BLE001 - reported
            failures.append(f"the unmutated sample does not import: {exc}")
        transaction.set_rollback(True)

    def attempt(data):
        with transaction.atomic():
            before = table_counts()
            try:
                run(data)
                outcomes.add("imported")
            except refusals as exc:
                outcomes.add("refused")
                message = str(exc)
                if not any(name in message for name in names) and not getattr(exc, "message_dict", None):
                    failures.append(f"refusal without the file name: {message[:300]!r} for {data[:300]!r}")
                if table_counts() != before:
                    failures.append(f"refused but the database changed, for {data[:300]!r}")
            except Exception as exc:  # noqa: BLE001 - this is what the test looks for
                failures.append(f"{type(exc).__name__}: {str(exc)[:300]} for {data[:300]!r}")
            transaction.set_rollback(True)

    @given(data=mutated(sample) if inputs is None else inputs)
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    def one(data):
        attempt(data)

    one()
    for data in each:
        attempt(data)
    if "refused" not in outcomes:
        failures.append("no input was refused: the test does not reach the importer's checks")
    return failures


def retyped(text):
    """Texts of a JSON or JSON-lines sample with one value replaced by a value of another kind (``other_kinds``): each
    place in the documents, lists and objects included, once (the first of the places that repeat from line to line
    or item to item of a list), by each other kind."""
    try:
        documents, lines = [json.loads(text)], None
    except ValueError:
        lines = text.splitlines()
        documents = [json.loads(line) if line.strip() else None for line in lines]
    seen, texts = set(), []
    for number, document in enumerate(documents):
        for path, value in nodes(document):
            shape = tuple("*" if isinstance(step, int) else step for step in path)
            if shape in seen:
                continue
            seen.add(shape)
            for new in other_kinds(value):
                changed = json.dumps(replaced(document, path, new))
                texts.append(changed if lines is None else "\n".join([*lines[:number], changed, *lines[number + 1 :]]))
    return texts


@pytest.fixture
def world(settings):
    without_rate_limits(settings)
    return World()


def test_metric_score_files(world):
    from metrics_eval.services import caption_keys, import_scores

    keys = caption_keys(world.dataset)
    sample = "video_id,system,fuzzmetric\n" + "".join(
        f"{video},{system},{0.25 * i}\n" for i, (video, system) in enumerate(sorted(keys))
    )
    failures = check_importer(
        sample, lambda text: import_scores(world.dataset, text, "scores.csv"), filename="scores.csv"
    )
    assert not failures, "\n".join(failures)


def test_correct_foil_pair_files(world):
    from metrics_eval.services import import_pairs

    videos = world.dataset.videos.values_list("external_id", flat=True)
    sample = "video_id,correct,foil\n" + "".join(f"{video},ClipTrans,RetrievalBaseline\n" for video in videos)
    failures = check_importer(
        sample, lambda text: import_pairs(world.dataset, text, "pairs.csv", pair_set="fuzz"), filename="pairs.csv"
    )
    assert not failures, "\n".join(failures)


def test_judgment_task_items(world):
    from annotation_site.judgment_tasks.imports import import_items

    video = world.video.external_id
    sample = (
        "\n".join(json.dumps({"video_id": video, "system": f"s{i}", "text": f"a caption {i}"}) for i in range(4)) + "\n"
    )
    failures = check_importer(
        sample,
        lambda text: import_items(world.task, text, filename="items.jsonl"),
        filename="items.jsonl",
        each=retyped(sample),
    )
    assert not failures, "\n".join(failures)


def test_factuality_raw_labels(world):
    from annotation_site.factuality.raw_labels import export_lines, import_lines

    exported = export_lines(world.project, anonymise=True)
    sample = exported if isinstance(exported, str) else "".join(exported)
    assert sample.strip(), "the demo project has answers to export"
    failures = check_importer(
        sample,
        lambda text: import_lines(text, project_name="fuzz-labels", dataset=world.dataset, filename="labels.jsonl"),
        filename="labels.jsonl",
        each=retyped(sample),
    )
    assert not failures, "\n".join(failures)


def test_direct_assessment_judgment_files(world):
    from assessment.csv_import import import_judgments

    client = Client()
    client.force_login(world.users["staff"])
    response = client.get(f"/da/campaigns/{world.campaign.name}/judgments.csv")
    sample = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    lines = sample.splitlines()
    sample = "\n".join(lines[:25]) + "\n"  # a header and a couple dozen judgments
    failures = check_importer(
        sample,
        lambda text: import_judgments("fuzz-da", io.StringIO(text, newline=""), "judgments.csv"),
        filename="judgments.csv",
    )
    assert not failures, "\n".join(failures)


def test_direct_assessment_uploads_restoring_the_platforms_own_workers(world):
    """The page's and the API's path (``import_upload``: bytes, the upload's checks first) with ``own_download``:
    the sample's first worker is a site account's (``account:NAME``), so mutations reach the restore lookup."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation_site.uploads import UploadRefused
    from assessment import workers
    from assessment.csv_import import import_upload

    account = workers.worker_for_user(world.users["annotator"]).external_id
    client = Client()
    client.force_login(world.users["staff"])
    response = client.get(f"/da/campaigns/{world.campaign.name}/judgments.csv")
    header, *rows = b"".join(response.streaming_content).decode().splitlines()
    first = rows[0].split(",")[0]
    sample = "\n".join([header, *(row.replace(first, account, 1) for row in rows[:24])]) + "\n"
    assert account in sample

    def run(text):
        data = text.encode("utf-8", "surrogatepass")
        return import_upload("fuzz-da-own", SimpleUploadedFile("restore.csv", data), own_download=True)

    failures = check_importer(sample, run, refusals=(*REFUSALS, UploadRefused), filename="restore.csv")
    assert not failures, "\n".join(failures)


def test_dataset_jsonl_uploads(world):
    from annotation_site.demo import services as demo
    from annotation_site.interchange import formats
    from annotation_site.interchange.services import ImportRefused, import_upload

    sample = formats.render("jsonl", demo.build_bundle(demo.demo_videos(2)))
    sample = sample.decode() if isinstance(sample, bytes) else sample

    def run(text):
        upload = SimpleUploadedFile("dataset.jsonl", text.encode("utf-8", "surrogatepass"))
        import_upload({"file": upload, "format": "jsonl", "name": "fuzz-dataset"})

    failures = check_importer(
        sample, run, refusals=REFUSALS + (ImportRefused,), filename="dataset.jsonl", each=retyped(sample)
    )
    assert not failures, "\n".join(failures)


def test_prolific_webhooks(world, settings):
    from annotation_site.crowd import webhooks

    settings.PROLIFIC_WEBHOOK_SECRET = "fuzz-secret"
    sample = json.dumps(
        {
            "event_type": "submission.status.change",
            "resource_id": "5f1a2b3c4d5e6f7a8b9c0d1e",
            "study_id": "60aa0bb1cc2dd3ee4ff5a6b7",
            "status": "RETURNED",
            "event_id": "evt-1",
        },
        indent=1,
    )

    def run(text):
        body = text.encode("utf-8", "surrogatepass")
        stamp = str(int(time.time()))
        webhooks.receive(
            {
                "X-Prolific-Request-Signature": webhooks.signature("fuzz-secret", stamp, body),
                "X-Prolific-Request-Timestamp": stamp,
                "X-Event-ID": "evt-fuzz",
            },
            body,
        )

    failures = check_importer(sample, run, refusals=(webhooks.WebhookRefused,), filename="", each=retyped(sample))
    assert not failures, "\n".join(failures)


def _factvc_annotation():
    from annotation_site.demo import services as demo
    from annotation_site.interchange import formats

    text = formats.render("factvc", demo.build_bundle(demo.demo_videos(2)))
    return text.decode() if isinstance(text, bytes) else text


def _import_factvc(content, filename):
    from annotation_site.interchange.services import import_upload

    import_upload({"file": SimpleUploadedFile(filename, content), "format": "factvc", "name": "fuzz-factvc"})


def test_factvc_annotation_files(world):
    """An uploaded factuality_annotation.json (the FactVC release's format) on its own."""
    from annotation_site.interchange.services import ImportRefused

    sample = _factvc_annotation()
    failures = check_importer(
        sample,
        lambda text: _import_factvc(text.encode("utf-8", "surrogatepass"), "factuality_annotation.json"),
        refusals=REFUSALS + (ImportRefused,),
        filename="factuality_annotation.json",
        each=retyped(sample),
    )
    assert not failures, "\n".join(failures)


def test_factvc_folders_in_zips(world):
    """A FactVC folder as a zip (its annotation file and vids.txt inside a top-level folder), the annotation
    mutated: refusals name the file inside the archive."""
    from annotation_site.interchange.services import ImportRefused

    annotation = _factvc_annotation()
    videos = "".join(f"{video}\n" for video in json.loads(annotation))

    def run(text):
        files = {
            "release/factuality_annotation.json": text.encode("utf-8", "surrogatepass"),
            "release/vids.txt": videos,
        }
        _import_factvc(zipped(files), "release.zip")

    failures = check_importer(
        annotation, run, refusals=REFUSALS + (ImportRefused,), filename="factuality_annotation.json"
    )
    assert not failures, "\n".join(failures)


@st.composite
def corrupted(draw, data):
    """``data`` cut short, or with up to four bytes overwritten anywhere, or both."""
    cut = draw(st.one_of(st.none(), st.integers(0, len(data) - 1)))
    damaged = bytearray(data if cut is None else data[:cut])
    for _ in range(draw(st.integers(0 if cut is not None else 1, 4))):
        if damaged:
            damaged[draw(st.integers(0, len(damaged) - 1))] = draw(st.integers(0, 255))
    return bytes(damaged)


def test_corrupt_zip_archives(world):
    """The bytes of a valid FactVC zip cut short, or with bytes overwritten anywhere (headers, the compressed
    stream, the central directory): imported or refused with a message naming the archive or a file in it,
    the database unchanged; never another exception."""
    from annotation_site.interchange.services import ImportRefused
    from annotation_site.uploads import UploadRefused

    annotation = _factvc_annotation()
    videos = "".join(f"{video}\n" for video in json.loads(annotation))
    archive = zipped({"factuality_annotation.json": annotation, "vids.txt": videos})
    failures = check_importer(
        archive,
        lambda data: _import_factvc(data, "release.zip"),
        refusals=REFUSALS + (ImportRefused, UploadRefused),
        filename=("release.zip", "factuality_annotation.json", "vids.txt"),
        inputs=corrupted(archive),
    )
    assert not failures, "\n".join(failures)


def mturk_study_and_results(world):
    """An MTurk study of the world's DA campaign and a batch results CSV for two of its HITs (one Answer.item_N
    column per item of the HIT)."""
    from annotation_site.crowd import studies
    from assessment.models import Item

    study = world.mturk_study("fuzz-mturk")
    batch, _ = studies.mturk_batch(study)
    hit_ids = [row["hit_id"] for row in csv.DictReader(io.StringIO(batch))]
    hits = list(world.campaign.hits.order_by("number")[:2])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    positions = list(Item.objects.filter(hit=hits[0]).order_by("position").values_list("position", flat=True))
    writer.writerow(
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id"]
        + [f"Answer.item_{position + 1}" for position in positions]
    )
    for n, hit in enumerate(hits):
        for worker in ("WFUZZA", "WFUZZB"):
            count = Item.objects.filter(hit=hit).count()
            scores = [str((17 * (n + 1) + 7 * i) % 101) for i in range(count)] + [""] * (len(positions) - count)
            writer.writerow([f"3HIT{hit.number}", f"AS{n}{worker}", worker, "Submitted", "300", hit_ids[n]] + scores)
    return study, out.getvalue()


def test_mturk_batch_results_files(world):
    """An MTurk batch results CSV of a Direct Assessment study, imported."""
    from annotation_site.crowd import mturk_import

    study, sample = mturk_study_and_results(world)
    failures = check_importer(
        sample,
        lambda text: mturk_import.import_results(study, text, filename="batch.csv"),
        refusals=REFUSALS + (mturk_import.mturk_formats.FormatError,),
        filename="batch.csv",
    )
    assert not failures, "\n".join(failures)


def retyped_cells(sample):
    """Texts of a CSV sample whose JSON cells (those of its first row that hold a list or an object) are
    ``retyped`` in turn."""
    rows = list(csv.reader(io.StringIO(sample)))
    texts = []
    for column, cell in enumerate(rows[1]):
        if not cell.startswith(("[", "{")):
            continue
        for changed in retyped(cell):
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows(
                [rows[0], [*rows[1][:column], changed, *rows[1][column + 1 :]]]
            )
            texts.append(out.getvalue() + sample.split("\n", 2)[2])
    return texts


def results_csv(header, rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue()


RESULTS_COLUMNS = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds"]


def check_results_file(study, sample, at_least=10):
    """``check_importer`` for an MTurk results file of ``study``: text mutations, and each place of its JSON cells
    retyped (at least ``at_least`` of them, else the sample has no JSON cell to speak of)."""
    from annotation_site.crowd import mturk_formats, mturk_import

    variants = retyped_cells(sample)
    assert len(variants) > at_least, variants
    return check_importer(
        sample,
        lambda text: mturk_import.import_results(study, text, filename="results.csv"),
        refusals=REFUSALS + (mturk_formats.FormatError,),
        filename="results.csv",
        each=variants,
    )


def test_mturk_results_of_a_factuality_project(world):
    """An MTurk batch results CSV of a factuality project: per system a score and the sentences as a JSON list."""
    from annotation_site.corpus.models import Sentence
    from annotation_site.factuality.models import ProjectVideo

    project = world.project
    study = world.mturk_study("fuzz-fact-mturk", "factuality", project)
    systems = list(project.systems.order_by("position", "name"))
    rows = []
    for n, unit in enumerate(ProjectVideo.objects.filter(project=project).order_by("position", "id")[:2]):
        cells = []
        for system in systems:
            count = Sentence.objects.filter(caption__video=unit.video, caption__system=system).count()
            sentences = [{"error": i % 2, "spans": [[0, 1]] if i % 2 else []} for i in range(count)]
            cells += [str(n + 2), json.dumps(sentences)]
        rows.append([f"3V{n}", f"AF{n}", f"WFACT{n}", "Submitted", "90", str(unit.pk), *cells])
    header = [*RESULTS_COLUMNS, "Input.hit_id"] + [
        f"Answer.{kind}_{system.name}" for system in systems for kind in ("score", "sentences")
    ]
    failures = check_results_file(study, results_csv(header, rows), at_least=20)  # each system's sentences cell
    assert not failures, "\n".join(failures)


def test_mturk_results_of_a_judgment_task(world):
    """An MTurk batch results CSV of a judgment task whose answer is JSON (the question-quality preset's pairs)."""
    from annotation_site.judgment_tasks import imports
    from annotation_site.judgment_tasks import services as tasks

    task = tasks.create_task(
        name="fuzz-task-mturk", dataset=world.dataset, preset="fifa-question-quality", annotators_per_item=2
    )
    items = [
        {"item_id": f"q{i}", "video_id": video, "tuples": ["a man", "a dog"], "questions": ["A man?", "A dog?"]}
        for i, video in enumerate(world.dataset.videos.order_by("pk").values_list("external_id", flat=True))
    ]
    imports.import_items(task, "".join(json.dumps(item) + "\n" for item in items), filename="items.jsonl")
    study = world.mturk_study("fuzz-task-mturk", "task", task)
    rows = [
        [f"3T{i}", f"AT{i}{w}", f"WTASK{w}", "Submitted", "61", item["item_id"], "[[0, 0], [1, 1]]"]
        for i, item in enumerate(items)
        for w in range(2)
    ]
    failures = check_results_file(study, results_csv([*RESULTS_COLUMNS, "Input.item_id", "Answer.matches"], rows))
    assert not failures, "\n".join(failures)


def test_mturk_approve_reject_files(world):
    """The same results files uploaded to be written back with Approve / Reject filled: each comes back with
    every assignment on its own row (the same AssignmentIds in the same order, its decision in its columns) or
    is refused naming the file."""
    from annotation_site.crowd import mturk_formats, mturk_import

    study, sample = mturk_study_and_results(world)

    def written(text):
        out = mturk_import.approve_reject_file(study, text, filename="batch.csv")
        given = [row.assignment_id for row in mturk_formats.parse_results(text)]
        try:
            back = [row.assignment_id for row in mturk_formats.parse_results(out, filename="the written file")]
        except mturk_formats.FormatError as exc:  # not a refusal of the input: a broken output
            raise AssertionError(f"the written file does not read back: {exc}") from None
        assert back == given, f"the assignments came back as {back}, not {given}"

    failures = check_importer(sample, written, refusals=REFUSALS + (mturk_formats.FormatError,), filename="batch.csv")
    assert not failures, "\n".join(failures)


def test_judgment_task_model_answers(world):
    from annotation_site.judgment_tasks.imports import import_model_answers
    from annotation_site.judgment_tasks.models import Item

    [question] = world.task.definition["questions"]
    points = [point[0] for point in question["scale"]]
    keys = list(Item.objects.filter(task=world.task).values_list("key", flat=True))
    sample = "".join(
        json.dumps({"item_id": key, "model": f"model-{m}", "answers": {question["id"]: points[m % len(points)]}}) + "\n"
        for key in keys
        for m in range(4)
    )
    failures = check_importer(
        sample,
        lambda text: import_model_answers(world.task, text, filename="model-answers.jsonl"),
        filename="model-answers.jsonl",
        each=retyped(sample),
    )
    assert not failures, "\n".join(failures)
