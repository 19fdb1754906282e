"""The ids crowd platforms hand over are normalised and fit where they go, wherever they arrive (entry link,
MTurk HIT page, MTurk results file, links to make): ``annotation_site/crowd/participant_ids.py``.

Found by trying each entry with ids at the columns' limits on PostgreSQL: a link study named with 100 characters
and a participant id of 150, or an MTurk WorkerId of 199, was a database error (a 500) when the participant
pressed Start or the file was imported (the worker key ``NAMESPACE:ID`` did not fit the protocols' worker
column); a hitId or assignmentId of 150 characters on the MTurk HIT page was one at once; a NUL in a WorkerId of
a results file was one on import; and a WorkerId with a zero-width space, from the HIT page or a results file,
made a second participant of the same worker (the entry link already normalised its ids)."""

import csv
import io
import re

import pytest
from django.urls import reverse

from annotation_site.annotators.models import Annotator
from annotation_site.crowd import admission, links, mturk_formats, mturk_import, participant_ids
from annotation_site.crowd.models import LedgerEntry, Participant, Participation
from assessment.models import Item, Judgment, Worker

from .conftest import study_of
from .test_da_adapter import campaign  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

LONGEST_NAME = "s" * 100  # the longest study name allowed (Study.name)
HIT_PAGE = {"assignmentId": "3AX", "hitId": "3HX", "workerId": "AW1", "turkSubmitTo": "https://www.mturk.com"}


def test_worker_keys_fit_the_protocols_worker_columns():
    assert Worker._meta.get_field("external_id").max_length == participant_ids.WORKER_KEY_MAX_LENGTH
    assert Annotator._meta.get_field("external_id").max_length == participant_ids.WORKER_KEY_MAX_LENGTH
    assert LedgerEntry._meta.get_field("worker_id").max_length >= participant_ids.WORKER_KEY_MAX_LENGTH
    assert participant_ids.platform_id_limit("mturk") == 194
    assert participant_ids.platform_id_limit(f"link:{LONGEST_NAME}") == 94
    assert participant_ids.platform_id_limit("") == 199  # never more than the worker key leaves room for


def enter(client, study, params):
    return client.get(reverse("crowd-entry", args=[links.entry_token(study)]), params)


def start(client, page):
    token = re.search(r"/crowd/w/([^/]+)/start/", page.content.decode()).group(1)
    return client.post(reverse("crowd-start", args=[token]))


def test_the_longest_participant_id_of_a_link_study_starts_and_a_longer_one_is_refused(client, campaign):  # noqa: F811
    study = study_of("da", campaign, LONGEST_NAME, id_parameter="pid")
    page = enter(client, study, {"pid": "p" * 95})
    assert page.status_code == 400
    assert "the participant id has 95 characters; at most 94 are allowed" in page.content.decode()
    assert not Participant.objects.exists() and not Participation.objects.exists()
    page = enter(client, study, {"pid": "p" * 94})
    assert page.status_code == 200
    assert start(client, page).status_code == 200  # the HIT handed out
    assert Worker.objects.get().external_id == f"link:{LONGEST_NAME}:{'p' * 94}"
    with pytest.raises(ValueError, match="at most 94 letters, digits"):
        admission.create_participant_links(study, ["q" * 95], expires_at=None)
    assert Participant.objects.count() == 1


@pytest.mark.parametrize(
    "field, value",
    [
        ("hitId", "H" * 150),  # a 500 at once (the participation's 100-character column)
        ("assignmentId", "A" * 150),
        ("assignmentId", "3a-x"),  # not an id MTurk issues: its results could never be imported
        ("hitId", "3H\x00"),
        ("workerId", "AW" + "1" * 193),  # 195: the worker key would not fit the worker column
        ("workerId", "AW1\u200b"),  # a second participant of AW1
        ("workerId", "AW\x001"),
    ],
)
def test_the_mturk_hit_page_refuses_ids_that_cannot_be_stored(client, campaign, field, value):  # noqa: F811
    study = study_of("da", campaign, "mt-page", provider="mturk")
    page = enter(client, study, {**HIT_PAGE, field: value})
    assert page.status_code == 400
    assert not Participant.objects.exists() and not Participation.objects.exists()


def test_one_worker_is_one_participant_from_the_hit_page_and_the_results_file(client, campaign):  # noqa: F811
    study = study_of("da", campaign, "mt-both", provider="mturk")
    page = enter(client, study, {**HIT_PAGE, "workerId": "\uff21W1"})  # a fullwidth A: NFKC makes it AW1
    assert page.status_code == 200
    assert start(client, page).status_code == 200  # the HIT handed out
    text = results_file(campaign, study, [("3AX", "AW1"), ("3AY", "AW\uff12")])  # AW1's assignment, and AW2
    assert mturk_import.import_results(study, text)["created"] == 1
    assert list(Participation.objects.order_by("pk").values_list("participant__platform_id", flat=True)) == [
        "AW1",
        "AW2",
    ]
    assert list(Participant.objects.values_list("namespace", "platform_id")) == [("mturk", "AW1"), ("mturk", "AW2")]
    assert list(Worker.objects.order_by("external_id").values_list("external_id", flat=True)) == [
        "mturk:AW1",
        "mturk:AW2",
    ]


def results_file(campaign, study, rows):  # noqa: F811
    """A results file of the campaign's first HIT: (AssignmentId, WorkerId) per row, every item scored 50."""
    from annotation_site.crowd import studies

    batch, _ = studies.mturk_batch(study)
    hit_id = next(csv.DictReader(io.StringIO(batch)))["hit_id"]
    hit = campaign.hits.order_by("number").first()
    positions = list(Item.objects.filter(hit=hit).order_by("position").values_list("position", flat=True))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.hit_id"]
        + [f"Answer.item_{p + 1}" for p in positions]
    )
    for assignment, worker in rows:
        writer.writerow(["3HIT", assignment, worker, "Submitted", "60", hit_id] + ["50"] * len(positions))
    return out.getvalue()


def test_a_results_file_with_worker_ids_that_cannot_be_stored_is_refused_whole(campaign):  # noqa: F811
    study = study_of("da", campaign, "mt-file", provider="mturk")
    text = results_file(
        campaign,
        study,
        [("3A1", "AW" + "1" * 193), ("3A2", "AW2\u200b"), ("3A3", "AW\x003"), ("3A4", "AW4")],
    )
    with pytest.raises(mturk_formats.FormatError) as refused:
        mturk_import.import_results(study, text, filename="batch.csv")
    assert refused.value.problems == [
        "batch.csv, line 2, field 'WorkerId': the WorkerId has 195 characters; at most 194 are allowed",
        "batch.csv, line 3, field 'WorkerId': the WorkerId holds an invisible or control character (ZERO WIDTH "
        "SPACE, U+200B); type it again without it",
        "batch.csv, line 4: a NUL character; NUL is not allowed in text",  # the results reader's own check
    ]
    assert not Participant.objects.exists() and not Judgment.objects.exists()
