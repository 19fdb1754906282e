"""Constant, small query counts on a crowd participant's way in (issue #8's arrival benchmark is CPU-bound: every
query costs Django time on each of hundreds of arrivals): the entry page, Start (taking a slot), the rating page
and the end page, on a real protocol (Direct Assessment). Counted as a crowd burst has them: after 1 and after
several earlier participants, on campaigns of different sizes; the counts must not move and stay under the bounds."""

import re
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation_site.crowd import links
from annotation_site.crowd.models import Participation, Study
from assessment import services
from assessment.models import Assignment, Item

from ..assessment.conftest import make_dataset, small_campaign
from .conftest import link_study, start_by_link

pytestmark = pytest.mark.django_db

# Bounds counted on the code as it is (SAVEPOINT / RELEASE lines included, as tests run inside a transaction).
# Start answers the rating page (one request fewer); RATE is that page's own GET (a reload). PostgreSQL creates a
# newcomer in one statement (crowd/rows.py), other databases in a transaction of two inserts.
ENTRY_AGAIN, START, RATE, FINISH = 3, 9, 3, 6


def entry_queries():
    return 5 if connection.vendor == "postgresql" else 6


def campaign_of(name, n_videos):
    dataset = make_dataset(name, n_videos=n_videos)
    return small_campaign(
        dataset, name, pairs_per_hit=5, repeats_per_hit=2, min_control_distance=4, qc_min_pairs=5, workers_per_hit=1
    )


def walk(client, study, pid):
    """One participant's requests; the number of queries of each."""
    counts = {}
    entry = reverse("crowd-entry", args=[links.entry_token(study)])
    with CaptureQueriesContext(connection) as queries:
        home = client.get(entry, {"pid": pid})
    counts["entry"] = len(queries)
    assert home.status_code == 200
    token = re.search(r"/crowd/w/([^/]+)/start/", home.content.decode()).group(1)
    with CaptureQueriesContext(connection) as queries:
        client.get(entry, {"pid": pid})
    counts["entry_again"] = len(queries)
    with CaptureQueriesContext(connection) as queries:
        started = client.post(reverse("crowd-start", args=[token]))
    counts["start"] = len(queries)
    assert started.status_code == 200 and b'id="da-state"' in started.content  # Start answers the rating page
    address = re.search(r'data-address="([^"]+)"', started.content.decode()).group(1)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(address)  # a reload (the page put its own address in the address bar)
    counts["rate"] = len(queries)
    assert b'id="da-state"' in page.content
    participation = Participation.objects.get(study=study, participant__platform_id=pid)
    assignment = Assignment.objects.select_related("hit__campaign").get(pk=int(participation.work_key))
    for item in Item.objects.filter(hit=assignment.hit).order_by("position").values_list("pk", flat=True):
        services.submit(assignment, item_id=item, score=70, client_uuid=uuid.uuid4(), played=True)
    with CaptureQueriesContext(connection) as queries:
        ended = client.get(reverse("crowd-finish", args=[token]))
    counts["finish"] = len(queries)
    assert ended.status_code == 200
    code = links.completion_code(study.pk, participation.work_key, participation.participant.worker_key)
    assert code.encode() in ended.content
    return counts


@pytest.mark.parametrize("n_videos", [12, 30])
def test_arrival_query_counts_are_constant_and_small(client, n_videos):
    campaign = campaign_of(f"qc-{n_videos}", n_videos)
    study = link_study("da", campaign, f"burst-{n_videos}")
    first = walk(client, study, "p000")
    earlier = min(11, campaign.hits.count() - 2)
    assert earlier >= 3
    for i in range(1, earlier + 1):  # earlier arrivals fill the tables the queries read
        client.cookies.clear()
        start_by_link(client, study, {"pid": f"x{i:03d}"})
    client.cookies.clear()
    later = walk(client, study, "p999")
    assert later == first
    assert first == {
        "entry": entry_queries(),
        "entry_again": ENTRY_AGAIN,
        "start": START,
        "rate": RATE,
        "finish": FINISH,
    }


def test_a_returning_worker_takes_a_slot_with_few_more_queries(client):
    """A worker the protocol knows already (another study of the same campaign) is locked, not created: the
    Start of a returning worker costs at most three queries more than a newcomer's."""
    campaign = campaign_of("qc-returning", 24)
    first = link_study("da", campaign, "returning-a")
    second = Study.objects.create(
        name="returning-b",
        provider="none",
        protocol="da",
        object_id=campaign.pk,
        target_name=campaign.name,
        status="published",
        id_parameter="pid",
    )
    assert walk(client, first, "r1")["start"] == START
    # the same worker key reaches the protocol again through a per-participant link of the other study
    from django.utils import timezone

    from annotation_site.crowd.models import Participant, ParticipantLink

    participant = Participant.objects.get(platform_id="r1")
    second.provider = "link"
    second.save(update_fields=["provider"])
    link = ParticipantLink.objects.create(
        study=second, participant=participant, expires_at=timezone.now() + timezone.timedelta(days=1), max_hits=2
    )
    home = client.get(reverse("crowd-participant-link", args=[links.participant_link_token(link)]))
    token = re.search(r"/crowd/w/([^/]+)/start/", home.content.decode()).group(1)
    with CaptureQueriesContext(connection) as queries:
        started = client.post(reverse("crowd-start", args=[token]))
    assert started.status_code == 200 and b'id="da-state"' in started.content
    assert len(queries) <= START + 3
