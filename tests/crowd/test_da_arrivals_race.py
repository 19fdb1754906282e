"""Crowd arrivals taking DA HITs at the same moment (the path of the arrival benchmark): newcomers are created
and handed a HIT in one transaction; racing threads on PostgreSQL (row locks, skip_locked, INSERT ... ON
CONFLICT) and on an SQLite file as in production (IMMEDIATE transactions) never put two workers on a one-worker
HIT, and the same newcomer arriving twice at once gets one worker row and one assignment."""

import threading

import pytest
from django.db import connections

from assessment import services
from assessment.models import Assignment, Worker

from ..assessment.conftest import make_dataset, small_campaign
from ..factuality.conftest import thread_database


@pytest.mark.django_db(transaction=True)
def test_newcomers_arriving_together_take_distinct_hits_and_a_duplicate_is_one_worker():
    dataset = make_dataset("race-arrivals", n_videos=24)
    campaign = small_campaign(
        dataset,
        "race-arrivals",
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=1,
    )
    n_hits = campaign.hits.count()
    keys = [f"link:race:p{i}" for i in range(min(8, n_hits - 1))] + ["link:race:p0"]  # p0 twice at once
    results, errors = {}, []
    with thread_database() as use:
        barrier = threading.Barrier(len(keys))

        def arrive(index, key):
            use()
            try:
                barrier.wait(timeout=30)
                assignment = services.assign_by_external_id(campaign.pk, key)
                results[index] = (key, assignment.pk if assignment else None, assignment.hit_id if assignment else None)
            except Exception as exc:  # reported by the assertion below
                errors.append(repr(exc))
            finally:
                connections.close_all()

        threads = [threading.Thread(target=arrive, args=(i, key)) for i, key in enumerate(keys)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        read = {}

        def read_rows():  # in a thread too: on SQLite the racing database is a file copy only threads open
            use()
            try:
                read["rows"] = list(
                    Assignment.objects.filter(hit__campaign_id=campaign.pk).values_list("worker__external_id", "hit_id")
                )
                read["workers"] = list(
                    Worker.objects.filter(external_id__startswith="link:race:").values_list("external_id", flat=True)
                )
            finally:
                connections.close_all()

        reader = threading.Thread(target=read_rows)
        reader.start()
        reader.join()
        rows, workers = read["rows"], read["workers"]
    assert not errors, errors
    assert all(pk is not None for _, pk, _ in results.values())
    hits = [hit for _, hit in rows]
    assert len(hits) == len(set(hits)) == len(set(keys)), rows  # one worker per HIT, one assignment per worker
    assert sorted(workers) == sorted(set(keys))
    twice = [(pk, hit) for key, pk, hit in results.values() if key == "link:race:p0"]
    assert len(twice) == 2 and twice[0] == twice[1]  # both requests answer the same assignment


@pytest.mark.django_db(transaction=True)
def test_newcomers_admitted_together_are_created_once():
    """The entry of a newcomer (PostgreSQL: one statement creating the participant and the participation): the
    same newcomer arriving three times at once gets one participant and one participation, others one each."""
    from annotation_site.crowd import admission
    from annotation_site.crowd.models import Participant, Participation, Study

    dataset = make_dataset("race-entry", n_videos=12)
    campaign = small_campaign(
        dataset,
        "race-entry",
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=1,
    )
    study = Study.objects.create(
        name="race-entry",
        provider="link",
        protocol="da",
        object_id=campaign.pk,
        target_name=campaign.name,
        status="published",
        id_parameter="pid",
    )
    pids = ["same", "same", "same", "a", "b", "c"]
    answers, errors = {}, []
    with thread_database() as use:
        barrier = threading.Barrier(len(pids))

        def arrive(index, pid):
            use()
            try:
                barrier.wait(timeout=30)
                answers[index] = (pid, admission.admit(Study.objects.get(pk=study.pk), {"pid": pid}).pk)
            except Exception as exc:  # reported by the assertion below
                errors.append(repr(exc))
            finally:
                connections.close_all()

        threads = [threading.Thread(target=arrive, args=(i, pid)) for i, pid in enumerate(pids)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        read = {}

        def read_rows():
            use()
            try:
                read["people"] = sorted(
                    Participant.objects.filter(namespace="link:race-entry").values_list("platform_id", flat=True)
                )
                read["participations"] = sorted(
                    Participation.objects.filter(study_id=study.pk).values_list("participant__platform_id", flat=True)
                )
            finally:
                connections.close_all()

        reader = threading.Thread(target=read_rows)
        reader.start()
        reader.join()
    assert not errors, errors
    assert read["people"] == read["participations"] == ["a", "b", "c", "same"]
    assert len({pk for pid, pk in answers.values() if pid == "same"}) == 1


@pytest.mark.django_db
def test_an_arrival_losing_many_races_for_a_hit_still_gets_one(monkeypatch):
    """Each lost race (the HIT filled between the candidate query and the lock) means someone else got a HIT:
    an arrival in a crowd may lose several in a row, and must not be told the study is full while HITs remain
    (a burst of 200 saw one such refusal when losing six races in a row gave up)."""
    dataset = make_dataset("race-lost", n_videos=12)
    campaign = small_campaign(
        dataset,
        "race-lost",
        pairs_per_hit=5,
        repeats_per_hit=2,
        min_control_distance=4,
        qc_min_pairs=5,
        workers_per_hit=1,
    )
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
