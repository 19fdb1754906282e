"""Direct Assessment plugged into crowd work: the adapter (units, slots, release, QC outcomes), the
crowd_payments contract on a campaign imported with da_import_judgments (no provider), the rating page ending on
the crowd's end page, and an MTurk batch round trip into DA judgments."""

import csv
import io
import json
import re
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation_site.crowd import adapters, admission, links, mturk_formats, mturk_import, payments
from annotation_site.crowd.models import LedgerEntry, Participant, Participation, Study
from assessment import services, workers
from assessment.models import Assignment, Item, Judgment, Worker

from ..assessment.conftest import make_dataset, small_campaign
from ..assessment.test_csv_import import valid_csv, write
from .conftest import link_study, payments_dry_run, start_by_link, study_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    dataset = make_dataset("da-crowd", n_videos=12)
    return small_campaign(
        dataset,
        "da-crowd",
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=1,
    )


def rate_all(assignment, *, good=True):
    for item, item_type in Item.objects.filter(hit=assignment.hit).order_by("position").values_list("pk", "item_type"):
        score = {"original": 90, "degraded": 10}.get(item_type, 60) if good else 50
        services.submit(assignment, item_id=item, score=score, client_uuid=uuid.uuid4(), played=True)


def test_the_adapter_describes_and_hands_out_hits(campaign):
    adapter, target = adapters.resolve("da", "da-crowd")
    description = adapter.describe(target)
    assert [u.capacity for u in description.units] == [1] * campaign.hits.count()
    assert description.scale == {"kind": "slider", "min": 0, "max": 100}
    first = adapter.assign(target, "prolific:P1")
    assert first.url.startswith("/da/a/") and not first.completed
    assert adapter.assign(target, "prolific:P1").key == first.key  # the open one again
    second = adapter.assign(target, "prolific:P2")
    assert second.unit_key != first.unit_key
    # releasing gives the HIT back; the released worker cannot resume it
    assert adapter.release(target, first.key) and not adapter.release(target, first.key)
    third = adapter.assign(target, "prolific:P3")
    assert third.unit_key == first.unit_key
    released = Assignment.objects.get(pk=int(first.key))
    with pytest.raises(services.AssignmentReleased):
        services.submit(
            released, item_id=Item.objects.filter(hit=released.hit).first().pk, score=50, client_uuid=uuid.uuid4()
        )
    # a HIT chosen by MTurk
    hit = campaign.hits.exclude(pk__in=[int(second.unit_key), int(third.unit_key)]).first()
    fixed = adapter.assign(target, "mturk:W1", unit_key=str(hit.pk))
    assert fixed.unit_key == str(hit.pk)
    assert adapter.assign(target, "mturk:W2", unit_key=str(hit.pk)) is None  # one worker per HIT


def test_qc_outcomes_reach_the_payment_decisions(campaign):
    adapter, target = adapters.resolve("da", "da-crowd")
    outcomes = {}
    for worker, good in (("link:x:good", True), ("link:x:bad", False)):
        work = adapter.assign(target, worker)
        rate_all(Assignment.objects.select_related("hit__campaign").get(pk=int(work.key)), good=good)
    adapter.assign(target, "link:x:busy")
    for record in adapter.assignments(target):
        outcomes[record.worker_id] = (record.completed, record.qc.status, record.qc.n_pairs)
    assert outcomes["link:x:good"] == (True, "passed", 5)
    assert outcomes["link:x:bad"] == (True, "failed", 5)
    assert outcomes["link:x:busy"][:2] == (False, "in_progress")


def test_crowd_payments_contract_on_an_imported_campaign(db, tmp_path):
    call_command("da_import_judgments", str(write(tmp_path, valid_csv())), campaign="trecvid", stdout=StringIO())
    document = payments_dry_run("trecvid", "approve-passing")
    assert set(document) == {"campaign", "policy", "decisions"} and document["campaign"] == "trecvid"
    by_worker = {d["worker_id"]: d for d in document["decisions"]}
    assert set(by_worker) == {"w1", "w2"}
    assert by_worker["w1"]["action"] == "approve" and by_worker["w1"]["hit_id"] == "h1"
    assert by_worker["w1"]["qc"]["status"] == "passed" and by_worker["w1"]["qc"]["test"] == "wilcoxon"
    assert by_worker["w1"]["qc"]["n_pairs"] == 10 and by_worker["w1"]["qc"]["threshold"] == 0.05
    assert by_worker["w2"]["action"] == "reject" and by_worker["w2"]["qc"]["status"] == "failed"
    assert all(d["state"] == "planned" and d["bonus"] is None for d in document["decisions"])
    assert not LedgerEntry.objects.exists() and not Study.objects.exists()  # --dry-run records nothing
    # recorded for real: a study of provider 'none' holds them, confirmed as recorded (nobody pays through us)
    call_command(
        "crowd_payments", "--campaign", "trecvid", "--policy", "approve-passing", stdout=StringIO(), stderr=StringIO()
    )
    study = Study.objects.get()
    call_command("crowd_ledger", "apply", "--study", study.name, stdout=StringIO())
    assert study.provider == "none" and study.name == "da-trecvid-records"
    assert sorted(LedgerEntry.objects.values_list("worker_id", "action", "state")) == [
        ("w1", "approve", "confirmed"),
        ("w2", "reject", "confirmed"),
    ]


def test_the_rating_page_of_crowd_work_ends_on_the_crowd_end_page(client, campaign):
    study = link_study("da", campaign, "da-panel")
    home = client.get(reverse("crowd-entry", args=[links.entry_token(study)]), {"pid": "amy"})
    token = re.search(r"/crowd/w/([^/]+)/", home.content.decode()).group(1)
    page = client.post(reverse("crowd-start", args=[token]))  # Start answers the rating page, no redirect
    assert page.status_code == 200 and b'id="da-state"' in page.content
    address = re.search(r'data-address="(/da/a/[^"]+/)"', page.content.decode()).group(1)  # what a reload GETs
    again = client.get(address)
    assert again.status_code == 200 and b"data-address" not in again.content

    def state(response):
        return json.loads(
            re.search(
                r'<script id="da-state" type="application/json">(.*?)</script>', response.content.decode(), re.S
            ).group(1)
        )

    # Start's page (its item read by hand-written SQL) shows what the page's own GET shows (the ORM's reads)
    assert state(page) == state(again) and state(page)["item"]["text"]
    assert re.search(r'data-finish-url="[^"]+"', again.content.decode())
    finish = re.search(r'data-finish-url="(/crowd/w/([^/]+)/finish/)"', page.content.decode())
    assert finish and links.participation_id_from_token(finish.group(2)) == links.participation_id_from_token(token)
    finish = finish.group(1)  # (signed tokens carry a timestamp: compare what they name)
    assert page["Content-Security-Policy"].startswith("frame-ancestors 'self'")
    participation = Participation.objects.get()
    rate_all(Assignment.objects.select_related("hit__campaign").get(pk=int(participation.work_key)))
    ended = client.get(finish)
    code = links.completion_code(study.pk, participation.work_key, participation.participant.worker_key)
    assert ended.status_code == 200 and code.encode() in ended.content
    assert Participation.objects.get().status == "completed"
    # an account's own rating page has no crowd end
    assert (
        b"data-finish-url"
        not in client.get(
            reverse(
                "da-rate-token",
                args=[services.assignment_token(services.assign(campaign, workers.worker_by_external_id("plain")))],
            )
        ).content
    )


def test_idle_crowd_work_is_released_by_the_protocol_activity(client, campaign):
    from datetime import timedelta

    from django.utils import timezone

    study = link_study("da", campaign, "da-panel", idle_minutes=10)
    participation = admission.admit(study, {"pid": "slow"})
    participation, work = admission.take_slot(participation)
    assignment = Assignment.objects.select_related("hit__campaign").get(pk=int(work.key))
    item = Item.objects.filter(hit=assignment.hit).order_by("position").first()
    services.submit(assignment, item_id=item.pk, score=40, client_uuid=uuid.uuid4(), played=True)
    Participation.objects.update(last_seen_at=timezone.now() - timedelta(minutes=20))
    assert admission.release_idle() == 0  # a judgment a moment ago is activity
    Judgment.objects.update(finished_at=timezone.now() - timedelta(minutes=15))
    Participation.objects.update(last_seen_at=timezone.now() - timedelta(minutes=20))
    assert admission.release_idle() == 1
    assert Assignment.objects.get(pk=assignment.pk).released_at is not None
    assert client.get(work.url).status_code == 410


def test_mturk_round_trip_into_da_judgments(campaign):
    study = study_of("da", campaign, "da-mturk", provider="mturk")
    from annotation_site.crowd import studies

    batch, _ = studies.mturk_batch(study)
    hits = list(csv.DictReader(io.StringIO(batch)))
    assert len(hits) == campaign.hits.count()
    hit = campaign.hits.order_by("number").first()
    items = list(Item.objects.filter(hit=hit).order_by("position").values_list("position", "item_type"))
    header = (
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id"]
        + [f"Answer.item_{p + 1}" for p, _ in items]
        + ["Approve", "Reject"]
    )

    def row(assignment, worker, good):
        scores = [{"original": 90, "degraded": 10}.get(t, 60) if good else 50 for _, t in items]
        return [f"3HIT{hit.number}", assignment, worker, "Submitted", "600", hits[0]["hit_id"]] + scores + ["", ""]

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerow(row("ASGOOD", "WGOOD", True))
    writer.writerow(row("ASBAD", "WBAD", False))
    text = out.getvalue()
    result = mturk_import.import_results(study, text)
    assert {key: result[key] for key in ("rows", "created", "unchanged")} == {"rows": 2, "created": 2, "unchanged": 0}
    # two workers on a HIT of one (workers_per_hit=1): both imported, the second named (tests/crowd/test_mturk_capacity)
    assert [warning.split(" now has")[0] for warning in result["warnings"]] == [
        f"results.csv, line 3, field 'WorkerId': HIT {hit.external_id or str(hit.number)!r}"
    ]
    stored = Judgment.objects.count()
    assert stored == 2 * len(items)
    assert mturk_import.import_results(study, text)["unchanged"] == 2 and Judgment.objects.count() == stored
    # the same AssignmentId under another WorkerId (an edited copy): refused, nothing written (it was answered
    # "unchanged" while a second worker and an empty assignment were written)
    before = (Worker.objects.count(), Assignment.objects.count(), Participant.objects.count())
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, text.replace("WBAD", "WOTHER"), filename="edited.csv")
    assert refused.value.problems == [
        "edited.csv, line 3, field 'WorkerId': assignment ASBAD was imported for worker WBAD, not WOTHER"
    ]
    assert (Worker.objects.count(), Assignment.objects.count(), Participant.objects.count()) == before
    adapter, target = adapters.resolve("da", campaign.name)
    payments.record(target, payments.preview(adapter, target, policy="approve-passing"), policy="approve-passing")
    upload = {
        r["AssignmentId"]: (r["Approve"], bool(r["Reject"]))
        for r in csv.DictReader(io.StringIO(mturk_import.approve_reject_file(study, text)))
    }
    assert upload == {"ASGOOD": ("x", False), "ASBAD": ("", True)}
    # malformed: a score out of range and an item the HIT does not have, refused whole with their lines
    bad = (
        text.replace(",90,", ",190,", 1).rstrip("\n")
        + "\n"
        + ",".join(row("ASNEW", "WNEW", True)[:6] + ["50"] * len(items))
        + ",,\n"
    )
    bad = bad.replace("Answer.item_2,", "Answer.item_99,", 1)
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, bad, filename="batch.csv")
    problems = "\n".join(refused.value.problems)
    assert "batch.csv, line 2, field 'Answer.item_" in problems and "0 to 100" in problems
    assert "item 99" in problems and "line 4" in problems
    assert Judgment.objects.count() == stored


def mturk_study_of_first_hit(campaign, name):
    """An MTurk study of the campaign, its first HIT's id in the batch, that HIT's item positions and the
    header of a results file answering it."""
    from annotation_site.crowd import studies

    study = study_of("da", campaign, name, provider="mturk")
    batch, _ = studies.mturk_batch(study)
    hit_id = next(csv.DictReader(io.StringIO(batch)))["hit_id"]
    hit = campaign.hits.order_by("number").first()
    positions = list(Item.objects.filter(hit=hit).order_by("position").values_list("position", flat=True))
    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id"]
    return study, hit_id, positions, header + [f"Answer.item_{p + 1}" for p in positions]


def test_a_worker_on_a_hit_twice_is_a_problem_of_the_line(campaign):
    """Two AssignmentIds of one worker on one HIT, in one file or across two imports, were an IntegrityError (a
    500): the worker's HIT is one assignment. Found by the importers' property test with 2,000 examples."""
    study, hit_id, positions, header = mturk_study_of_first_hit(campaign, "da-twice")

    def results(*assignments):
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(header)
        for assignment in assignments:
            writer.writerow(["3HIT", assignment, "WTWICE", "Submitted", "60", hit_id] + ["50"] * len(positions))
        return out.getvalue()

    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, results("AS1", "AS2"), filename="twice.csv")
    assert refused.value.problems == [
        f"twice.csv, line 3, field 'WorkerId': WTWICE answered HIT {hit_id} already on line 2"
    ]
    assert not Judgment.objects.exists() and not Participation.objects.exists()
    assert mturk_import.import_results(study, results("AS1"))["created"] == 1
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, results("AS2"), filename="later.csv")
    assert refused.value.problems == [
        "later.csv, line 2, field 'WorkerId': WTWICE already did this HIT as assignment AS1 (imported earlier)"
    ]
    assert list(Participation.objects.values_list("external_submission_id", flat=True)) == ["AS1"]


def test_a_start_refused_for_a_full_study_leaves_no_worker_behind(client, campaign):
    """The adapter makes the participant's DA worker record before it looks for a free HIT; when there is none,
    the refusal (409, "This study is full") kept that record (found by posting every route each body type)."""
    study = link_study("da", campaign, "da-full")
    for hit in campaign.hits.all():  # every HIT taken by someone else
        Assignment.objects.create(hit=hit, worker=workers.participant_worker(f"other:{hit.pk}"))
    worker_count = Worker.objects.count()
    _, started = start_by_link(client, study, {"pid": "late-comer"})
    assert started.status_code == 409 and b"This study is full" in started.content
    assert Worker.objects.count() == worker_count
    study.refresh_from_db()
    assert study.places_taken == 0


def test_mturk_results_of_hits_of_different_sizes_import(campaign):
    """MTurk writes one Answer column per item of the batch's largest HIT and leaves the extra ones empty for a
    smaller HIT: those empty cells were refused ("HIT ... has no item N"). An empty cell of an item the HIT has
    is still a problem: that item was not answered."""
    study, hit_id, positions, header = mturk_study_of_first_hit(campaign, "da-sizes")
    header += [f"Answer.item_{len(positions) + 1}"]  # a column of a larger HIT

    def results(scores):
        out = io.StringIO()
        csv.writer(out).writerows([header, ["3HIT", "ASSIZE", "WSIZE", "Submitted", "60", hit_id] + scores])
        return out.getvalue()

    unanswered = ["50"] * (len(positions) - 1) + ["", ""]
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, results(unanswered), filename="sizes.csv")
    assert [p.split(": ", 1)[0] for p in refused.value.problems] == [
        f"sizes.csv, line 2, field 'Answer.item_{len(positions)}'"
    ]
    assert mturk_import.import_results(study, results(["50"] * len(positions) + [""]))["created"] == 1
    assert Judgment.objects.count() == len(positions)
