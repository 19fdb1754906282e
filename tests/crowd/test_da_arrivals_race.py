"""Crowd arrivals taking DA HITs at the same moment (the path of the arrival benchmark): newcomers are created
and handed a HIT in one transaction; racing threads on PostgreSQL (row locks, skip_locked, INSERT ... ON
CONFLICT) and on an SQLite file as in production (IMMEDIATE transactions) never put two workers on a one-worker
HIT, and the same newcomer arriving twice at once gets one worker row and one assignment."""

import pytest

from assessment import services
from assessment.models import Assignment, Worker

from ..assessment.conftest import make_dataset, small_campaign
from ..factuality.conftest import in_thread, race, thread_database
from .conftest import link_study


def one_worker_campaign(name, n_videos):
    """A campaign (and its dataset) named ``name`` whose HITs take one worker each."""
    return small_campaign(
        make_dataset(name, n_videos=n_videos),
        name,
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=1,
    )


@pytest.mark.django_db(transaction=True)
def test_newcomers_arriving_together_take_distinct_hits_and_a_duplicate_is_one_worker():
    campaign = one_worker_campaign("race-arrivals", 24)
    n_hits = campaign.hits.count()
    keys = [f"link:race:p{i}" for i in range(min(8, n_hits - 1))] + ["link:race:p0"]  # p0 twice at once
    with thread_database() as use:

        def arrive(ready, key):
            ready()
            assignment = services.assign_by_external_id(campaign.pk, key)
            return key, assignment.pk if assignment else None, assignment.hit_id if assignment else None

        results, errors = race(arrive, [(key,) for key in keys], use=use)

        def read_rows():  # in a thread too: on SQLite the racing database is a file copy only threads open
            return (
                list(
                    Assignment.objects.filter(hit__campaign_id=campaign.pk).values_list("worker__external_id", "hit_id")
                ),
                list(Worker.objects.filter(external_id__startswith="link:race:").values_list("external_id", flat=True)),
            )

        rows, workers = in_thread(use, read_rows)
    assert not errors, errors
    assert all(pk is not None for _, pk, _ in results)
    hits = [hit for _, hit in rows]
    assert len(hits) == len(set(hits)) == len(set(keys)), rows  # one worker per HIT, one assignment per worker
    assert sorted(workers) == sorted(set(keys))
    twice = [(pk, hit) for key, pk, hit in results if key == "link:race:p0"]
    assert len(twice) == 2 and twice[0] == twice[1]  # both requests answer the same assignment


@pytest.mark.django_db(transaction=True)
def test_newcomers_admitted_together_are_created_once():
    """The entry of a newcomer (PostgreSQL: one statement creating the participant and the participation): the
    same newcomer arriving three times at once gets one participant and one participation, others one each."""
    from annotation_site.crowd import admission
    from annotation_site.crowd.models import Participant, Participation, Study

    campaign = one_worker_campaign("race-entry", 12)
    study = link_study("da", campaign, "race-entry")
    pids = ["same", "same", "same", "a", "b", "c"]
    with thread_database() as use:

        def arrive(ready, pid):
            ready()
            return pid, admission.admit(Study.objects.get(pk=study.pk), {"pid": pid}).pk

        answers, errors = race(arrive, [(pid,) for pid in pids], use=use)

        def read_rows():
            return {
                "people": sorted(
                    Participant.objects.filter(namespace="link:race-entry").values_list("platform_id", flat=True)
                ),
                "participations": sorted(
                    Participation.objects.filter(study_id=study.pk).values_list("participant__platform_id", flat=True)
                ),
            }

        read = in_thread(use, read_rows)
    assert not errors, errors
    assert read["people"] == read["participations"] == ["a", "b", "c", "same"]
    assert len({pk for pid, pk in answers if pid == "same"}) == 1


@pytest.mark.django_db
def test_an_arrival_losing_many_races_for_a_hit_still_gets_one(monkeypatch):
    """Each lost race (the HIT filled between the candidate query and the lock) means someone else got a HIT:
    an arrival in a crowd may lose several in a row, and must not be told the study is full while HITs remain
    (a burst of 200 saw one such refusal when losing six races in a row gave up)."""
    campaign = one_worker_campaign("race-lost", 12)
    real, lost = services._insert_if_room, []

    def filled_meanwhile(worker_id, hit_id, workers_per_hit, now):
        if len(lost) < 10:
            lost.append(hit_id)
            return None
        return real(worker_id, hit_id, workers_per_hit, now)

    monkeypatch.setattr(services, "_insert_if_room", filled_meanwhile)
    assignment = services.assign_by_external_id(campaign.pk, "link:race-lost:p1")
    assert assignment is not None and len(lost) == 10
    assert Assignment.objects.get().worker.external_id == "link:race-lost:p1"
